// x402 sessions (`batch-settlement`) at the gateway, end to end: the official client (`BatchSettlementEvmScheme` through
// `@x402/fetch`) deposits once through the local facilitator and then pays each call by voucher only, each served by
// the channel's Durable Object in one call; the charge is committed only when the upstream answered below 400.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseRecord, READ_MODEL_MOVES } from "../../src/core/ledger/payment-object.ts";
import { channelObjectName } from "../../src/core/sessions/channel-storage.ts";
import { getDb } from "../../src/db/client.ts";
import { applyPaymentRecords } from "../../src/db/ledger.ts";
import { sessionBuyer as sessionBuyerOf } from "./session-support.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  net,
  openShop,
  type Shop,
  UPSTREAM,
  upstreamRequests,
} from "./support.ts";

const PRICE = 1_000n;
const FUNDS = 1_000_000n;
/** The paywalls' least deposit: enough for 20 calls. */
const DEPOSIT = 20n * PRICE;
const AUTHORIZER = privateKeyToAccount(`0x${"5e".repeat(32)}`).address;
/** A paywall with sessions on (set as its owner's API would: in its row). */
async function sessionShop(options: { price?: bigint; minDeposit?: bigint | null } = {}): Promise<Shop> {
  const shop = await openShop({ price: (options.price ?? PRICE).toString() });
  await env.DB.prepare("UPDATE paywalls SET sessions_enabled = 1, sessions_min_deposit = ? WHERE id = ?")
    .bind(options.minDeposit === undefined ? DEPOSIT.toString() : (options.minDeposit?.toString() ?? null), shop.paywallId)
    .run();
  return shop;
}

/** A buyer of its own with 1 USDC, paying through the official client at most `cap` at once. */
const sessionBuyer = (envOverrides: Partial<Env> = GATEWAY_ENV, cap = "100000") =>
  sessionBuyerOf({ funds: FUNDS, cap, envOverrides });

const receiptOf = (res: Response) => {
  const header = res.headers.get("PAYMENT-RESPONSE");
  return header ? decodePaymentResponseHeader(header) : undefined;
};
const channelIdOf = (res: Response) =>
  (receiptOf(res)?.extra as { channelState?: { channelId: Hex } } | undefined)?.channelState?.channelId as Hex;

/** The channel's object, as the gateway names it. */
const channelObject = (shop: Shop, channelId: string) =>
  env.CHANNELS.getByName(channelObjectName(net.network, shop.merchant, channelId));
const chargedOn = async (shop: Shop, channelId: string) => {
  const { record } = await channelObject(shop, channelId).state();
  return record === null ? undefined : (JSON.parse(record) as { chargedCumulativeAmount: string }).chargedCumulativeAmount;
};

const facilitatorCalls = async () => ((await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as unknown[]).length;

/** A paid call's URL at the shop: the query tells the calls apart in the upstream's records. */
const call = (shop: Shop, n: number | string) => `${shop.x402}?call=${n}`;

describe("a session paid by the official client", () => {
  it("offers batch-settlement beside exact, with the platform's receiver authorizer and the least deposit", async () => {
    const shop = await sessionShop({ minDeposit: 5_000n });
    const res = await gatewayFetch(shop.x402);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.accepts.map((a) => a.scheme)).toEqual(["exact", "batch-settlement"]);
    expect(required.accepts[1]).toMatchObject({ amount: PRICE.toString(), payTo: shop.merchant, network: net.network });
    expect(required.accepts[1]?.extra).toMatchObject({ receiverAuthorizer: AUTHORIZER, minDeposit: "5000" });
    expect(JSON.stringify(required)).not.toContain("5e5e5e");
  });

  it("deposits once through the facilitator, then pays each call by voucher only, each answered by the upstream", async () => {
    const shop = await sessionShop();
    const b = await sessionBuyer();
    const before = await balanceOf(b.account.address);
    const first = await b.fetch(call(shop, 1));
    expect(first.status, await first.clone().text()).toBe(200);
    const opened = receiptOf(first);
    expect(opened?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const deposit = BigInt(opened?.amount ?? "0");
    expect(deposit).toBe(DEPOSIT);
    expect(await balanceOf(b.account.address)).toBe(before - deposit);
    const channelId = channelIdOf(first);

    const facilitatorBefore = await facilitatorCalls();
    for (let n = 2; n <= 5; n++) {
      const res = await b.fetch(call(shop, n));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { query: string }).query).toContain(`call=${n}`);
      expect(receiptOf(res)).toMatchObject({ success: true, transaction: "" });
    }
    expect(await facilitatorCalls()).toBe(facilitatorBefore);
    expect(await balanceOf(b.account.address)).toBe(before - deposit);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(5);
    expect(await chargedOn(shop, channelId)).toBe((5n * PRICE).toString());
  });
});

/** A shop with an open channel of `calls` committed calls, the buyer, and the channel's id. */
async function openChannel(calls = 1, shop?: Shop) {
  const s = shop ?? (await sessionShop());
  const b = await sessionBuyer();
  let channelId: Hex | undefined;
  for (let n = 1; n <= calls; n++) {
    const res = await b.fetch(call(s, n));
    expect(res.status, await res.clone().text()).toBe(200);
    channelId ??= channelIdOf(res);
  }
  return { shop: s, b, channelId: channelId as Hex };
}

const setRoute = (shop: Shop, route: string, timeoutMs = 30_000) =>
  env.DB.prepare("UPDATE paywalls SET target_route = ?, timeout = ? WHERE id = ?").bind(route, timeoutMs, shop.paywallId).run();

const withVoucher = (url: string, header: string) => gatewayFetch(url, { headers: { "PAYMENT-SIGNATURE": header } });

describe("a voucher's path", () => {
  /** `DB` with every statement counted. */
  const countingD1 = <T extends { prepare(q: string): D1PreparedStatement }>(d1: T, seen: string[]): T =>
    new Proxy(d1, {
      get(target, prop) {
        if (prop === "prepare")
          return (q: string) => {
            seen.push(q);
            return target.prepare(q);
          };
        if (prop === "withSession")
          return (c?: D1SessionConstraint) => countingD1((target as unknown as D1Database).withSession(c), seen);
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  /** A Durable Object namespace whose stubs' calls are counted (`<binding>.<method>`). */
  const countingObjects = <T extends Rpc.DurableObjectBranded>(ns: DurableObjectNamespace<T>, label: string, seen: string[]) =>
    new Proxy(ns, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== "get" && prop !== "getByName") return typeof value === "function" ? value.bind(target) : value;
        return (...args: unknown[]) => {
          const stub = Reflect.apply(value as (...a: unknown[]) => object, target, args);
          return new Proxy(stub, {
            get(s, method) {
              const fn = Reflect.get(s, method);
              if (typeof fn !== "function" || typeof method === "symbol" || method === "then") return fn;
              return (...a: unknown[]) => {
                seen.push(`${label}.${String(method)}`);
                return Reflect.apply(fn, s, a);
              };
            },
          });
        };
      },
    });

  afterEach(() => vi.restoreAllMocks());

  it("is one Durable Object call: no D1 statement, no facilitator, no chain", async () => {
    const d1: string[] = [];
    const objects: string[] = [];
    // The paywall's state as production keeps it between requests (PAYWALL_STATE_TTL_MS), read once by the deposit.
    const counted = {
      ...GATEWAY_ENV,
      PAYWALL_STATE_TTL_MS: "60000",
      DB: countingD1(env.DB, d1),
      CHANNELS: countingObjects(env.CHANNELS, "CHANNELS", objects),
      PAYMENT_COORDINATOR: countingObjects(env.PAYMENT_COORDINATOR, "PAYMENT_COORDINATOR", objects),
      FACILITATOR_HEALTH: countingObjects(env.FACILITATOR_HEALTH, "FACILITATOR_HEALTH", objects),
      RATE_LIMITER: countingObjects(env.RATE_LIMITER, "RATE_LIMITER", objects),
    } as Partial<Env>;
    const shop = await sessionShop();
    const b = await sessionBuyer(counted);
    const first = await b.fetch(call(shop, 1));
    expect(first.status, await first.clone().text()).toBe(200);
    const facilitatorBefore = await facilitatorCalls();
    const hosts: string[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      hosts.push(new URL(input instanceof Request ? input.url : String(input)).host);
      return realFetch(input, init);
    });
    d1.length = 0;
    objects.length = 0;
    for (let n = 2; n <= 4; n++) {
      const before = objects.length;
      const res = await b.fetch(call(shop, n));
      expect(res.status).toBe(200);
      expect(objects.slice(before)).toEqual(["CHANNELS.serve"]);
    }
    vi.restoreAllMocks();
    expect(d1).toEqual([]);
    expect(new Set(hosts)).toEqual(new Set([new URL(UPSTREAM).host]));
    expect(await facilitatorCalls()).toBe(facilitatorBefore);
  });
});

describe("the charge follows the upstream's answer", () => {
  it("an upstream 5xx charges nothing, the channel stays as it was, and the same voucher pays the retry", async () => {
    const { shop, b, channelId } = await openChannel(1);
    const before = await channelObject(shop, channelId).state();
    await setRoute(shop, "/status/503");
    const failed = await b.fetch(call(shop, 2));
    expect(failed.status).toBe(503);
    const after = await channelObject(shop, channelId).state();
    expect(JSON.parse(after.record ?? "{}")).toEqual(JSON.parse(before.record ?? "{}"));
    const voucher = b.sent.at(-1) as string;
    await setRoute(shop, "/echo");
    const retried = await withVoucher(call(shop, 3), voucher);
    expect(retried.status, await retried.clone().text()).toBe(200);
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
  });

  it("an upstream timeout charges nothing (504 in the envelope), and the same voucher pays the retry", async () => {
    const { shop, b, channelId } = await openChannel(1);
    await setRoute(shop, "/hang/3000/echo", 300);
    const failed = await b.fetch(call(shop, 2));
    expect(failed.status).toBe(504);
    expect(await failed.json()).toMatchObject({ code: "GATEWAY_TIMEOUT" });
    expect(await chargedOn(shop, channelId)).toBe(PRICE.toString());
    await setRoute(shop, "/echo");
    const retried = await withVoucher(call(shop, 3), b.sent.at(-1) as string);
    expect(retried.status).toBe(200);
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
  });

  it("two concurrent requests with one voucher: one served, the other waits its turn and gets the corrective 402", async () => {
    const { shop, b, channelId } = await openChannel(1);
    await setRoute(shop, "/status/503");
    await b.fetch(call(shop, "unused"));
    const voucher = b.sent.at(-1) as string;
    await setRoute(shop, "/hang/300/echo");
    const answers = await Promise.all([withVoucher(call(shop, "a"), voucher), withVoucher(call(shop, "b"), voucher)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 402]);
    const refused = answers.find((r) => r.status === 402) as Response;
    const required = decodePaymentRequiredHeader(refused.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    const session = required.accepts.find((a) => a.scheme === "batch-settlement");
    expect(session?.extra?.channelState).toMatchObject({ chargedCumulativeAmount: (2n * PRICE).toString() });
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
    expect(await b.scheme.processCorrectivePaymentRequired(required)).toBe(true);
  });
});

describe("a voucher sent again", () => {
  it("for the same request: the kept answer, nothing charged again, the upstream not called", async () => {
    const { shop, b, channelId } = await openChannel(2);
    const voucher = b.sent.at(-1) as string;
    const calls = (await upstreamRequests(shop.prefix)).length;
    const again = await withVoucher(call(shop, 2), voucher);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { query: string }).query).toContain("call=2");
    expect(receiptOf(again)).toMatchObject({ success: true });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(calls);
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
  });

  it("a copy of the last voucher with another amount: refused as a forgery (a 402), never served its kept answer", async () => {
    const { shop, b, channelId } = await openChannel(2);
    const last = decodePaymentSignatureHeader(b.sent.at(-1) as string);
    const voucher = (last.payload as { voucher: Record<string, unknown> }).voucher;
    const tampered = { ...last, payload: { ...last.payload, voucher: { ...voucher, maxClaimableAmount: "7" } } };
    const calls = (await upstreamRequests(shop.prefix)).length;
    const res = await withVoucher(call(shop, 2), encodePaymentSignatureHeader(tampered as PaymentPayload));
    expect(res.status).toBe(402);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(calls);
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
  });

  it("for another request: the corrective 402, nothing charged, the upstream not called", async () => {
    const { shop, b, channelId } = await openChannel(2);
    const calls = (await upstreamRequests(shop.prefix)).length;
    const again = await withVoucher(call(shop, "other"), b.sent.at(-1) as string);
    expect(again.status).toBe(402);
    const required = decodePaymentRequiredHeader(again.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(calls);
    expect(await chargedOn(shop, channelId)).toBe((2n * PRICE).toString());
  });

  it("through another tenant's paywall to the same wallet: refused, nothing charged", async () => {
    const { shop, b, channelId } = await openChannel(1);
    const other = await sessionShop();
    await env.DB.prepare("UPDATE paywalls SET merchant_wallet = ? WHERE id = ?").bind(shop.merchant, other.paywallId).run();
    const res = await b.fetch(call(other, 1));
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toContain("another paywall");
    expect(await upstreamRequests(other.prefix)).toHaveLength(0);
    expect(await chargedOn(shop, channelId)).toBe(PRICE.toString());
  });
});

describe("bad input", () => {
  const decode = (header: string) => JSON.parse(atob(header)) as PaymentPayload;
  const encode = (payload: unknown) => btoa(JSON.stringify(payload));
  type Voucher = { voucher: { channelId: string; maxClaimableAmount: string; signature: string } };

  it("a forged signature, a wrong cumulative, another chain or token, a malformed payload: a 402, nothing charged", async () => {
    const { shop, b, channelId } = await openChannel(1);
    await setRoute(shop, "/status/503");
    await b.fetch(call(shop, "unused"));
    await setRoute(shop, "/echo");
    const valid = decode(b.sent.at(-1) as string);
    const raw = valid.payload as unknown as Voucher;
    const signature = raw.voucher.signature;
    const forged = `${signature.slice(0, 10)}${signature[10] === "a" ? "b" : "a"}${signature.slice(11)}`;
    const variants: [string, unknown][] = [
      ["forged signature", { ...valid, payload: { ...raw, voucher: { ...raw.voucher, signature: forged } } }],
      ["cumulative below charged", { ...valid, payload: { ...raw, voucher: { ...raw.voucher, maxClaimableAmount: "1" } } }],
      [
        "cumulative above deposit",
        { ...valid, payload: { ...raw, voucher: { ...raw.voucher, maxClaimableAmount: "999999999" } } },
      ],
      ["another chain", { ...valid, accepted: { ...valid.accepted, network: "eip155:1" } }],
      ["another token", { ...valid, accepted: { ...valid.accepted, asset: "0x0000000000000000000000000000000000000001" } }],
      ["no voucher", { ...valid, payload: { type: "voucher" } }],
      ["a channel id that is not one", { ...valid, payload: { ...raw, voucher: { ...raw.voucher, channelId: "0x1" } } }],
    ];
    for (const [name, payload] of variants) {
      const res = await withVoucher(call(shop, name), encode(payload));
      expect(res.status, name).toBe(402);
      expect(res.headers.get("PAYMENT-REQUIRED"), name).toBeTruthy();
    }
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);
    expect(await chargedOn(shop, channelId)).toBe(PRICE.toString());
    // The untouched voucher still pays: nothing above moved the channel.
    expect((await withVoucher(call(shop, 2), encode(valid))).status).toBe(200);
  });
});

describe("a bad deposit", () => {
  type Deposit = { deposit: { amount: string; authorization: { erc3009Authorization: { signature: string } } } };
  const decode = (header: string) => JSON.parse(atob(header)) as PaymentPayload;
  const encode = (payload: unknown) => btoa(JSON.stringify(payload));

  it("a forged or inflated deposit authorization: the facilitator's refusal as a 402, nothing moved or recorded", async () => {
    const shop = await sessionShop();
    const b = await sessionBuyer();
    await setRoute(shop, "/status/503");
    expect((await b.fetch(call(shop, "unused"))).status).toBe(503);
    await setRoute(shop, "/echo");
    const valid = decode(b.sent.at(-1) as string);
    const raw = valid.payload as unknown as Deposit;
    const auth = raw.deposit.authorization.erc3009Authorization;
    const flipped = `${auth.signature.slice(0, 10)}${auth.signature[10] === "a" ? "b" : "a"}${auth.signature.slice(11)}`;
    const forged = {
      ...raw,
      deposit: { ...raw.deposit, authorization: { erc3009Authorization: { ...auth, signature: flipped } } },
    };
    const inflated = { ...raw, deposit: { ...raw.deposit, amount: (FUNDS * 2n).toString() } };
    const before = await balanceOf(b.account.address);
    for (const [name, payload] of [
      ["forged", forged],
      ["inflated", inflated],
    ] as const) {
      const res = await withVoucher(call(shop, name), encode({ ...valid, payload }));
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(402);
    }
    expect(await balanceOf(b.account.address)).toBe(before);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    // The untouched deposit still opens the channel: nothing above left a trace on it.
    const opened = await withVoucher(call(shop, 1), encode(valid));
    expect(opened.status).toBe(200);
    expect(await balanceOf(b.account.address)).toBe(before - DEPOSIT);
  });
});

describe("records", () => {
  it("each committed call's event and channel row wait in the object, leave from its alarm, and stay until landed", async () => {
    const { shop, channelId } = await openChannel(2);
    const object = channelObject(shop, channelId);
    const kept = (await object.state()).unsent;
    const records = kept.map((u) => JSON.parse(u.record) as { kind: string; row: Record<string, unknown> });
    expect(records.map((r) => r.kind)).toEqual(["event", "channel", "event", "channel"]);
    expect(records[2]?.row).toMatchObject({ eventType: "SUCCESS", amount: PRICE.toString(), paywallId: shop.paywallId });
    expect(records[2]?.row.metadata).toEqual({ channelId: channelId.toLowerCase(), cumulative: (2n * PRICE).toString() });
    expect(records[3]?.row).toMatchObject({ id: channelId.toLowerCase(), charged: (2n * PRICE).toString(), seq: 2 });
    // Derived: the same call's event has the same id wherever it is built.
    const digest = async (text: string) =>
      Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))), (x) =>
        x.toString(16).padStart(2, "0"),
      ).join("");
    expect(records[0]?.row.id).toBe(`evt_${await digest(`${channelId.toLowerCase()}:${PRICE}`)}`);
    expect(kept.every((u) => !u.sent)).toBe(true);

    // Landing twice (a message sent again before its report came back) records each call once.
    const parsed = kept.map((u) => parseRecord(u.record));
    for (let i = 0; i < 2; i++) await applyPaymentRecords(getDb(env.DB), parsed, READ_MODEL_MOVES);
    const landed = await env.DB.prepare("SELECT event_type, amount FROM events WHERE paywall_id = ?").bind(shop.paywallId).all();
    expect(landed.results).toEqual([
      { event_type: "SUCCESS", amount: PRICE.toString() },
      { event_type: "SUCCESS", amount: PRICE.toString() },
    ]);

    await runDurableObjectAlarm(object);
    const sent = (await object.state()).unsent;
    expect(sent.every((u) => u.sent)).toBe(true);
    await object.recordsLanded(sent.map((u) => u.seq));
    expect((await object.state()).unsent).toEqual([]);
  });
});

describe("the least deposit", () => {
  it("a first deposit below the paywall's minDeposit is refused with the scheme's reason; nothing moves", async () => {
    const shop = await sessionShop({ minDeposit: DEPOSIT });
    // A client that will not deposit more than 3 calls' worth.
    const b = await sessionBuyer(GATEWAY_ENV, (3n * PRICE).toString());
    const before = await balanceOf(b.account.address);
    const res = await b.fetch(call(shop, 1));
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("invalid_batch_settlement_evm_deposit_below_min_deposit");
    expect(await balanceOf(b.account.address)).toBe(before);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
  });
});

describe("a refund", () => {
  it("the client's refund() through the gateway returns the unspent deposit", async () => {
    const { shop, b } = await openChannel(3);
    const before = await balanceOf(b.account.address);
    const refunded = await b.scheme.refund(call(shop, "refund"), { fetch: gatewayFetch });
    expect(refunded.success).toBe(true);
    expect(BigInt(refunded.amount ?? "0")).toBe(DEPOSIT - 3n * PRICE);
    expect(await balanceOf(b.account.address)).toBe(before + DEPOSIT - 3n * PRICE);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(3);
  });

  it("a refund sent again once the channel is refunded: the scheme's 402, never a 5xx, nothing moves", async () => {
    const { shop, b } = await openChannel(2);
    const sent: string[] = [];
    const recording = (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const signature = request.headers.get("PAYMENT-SIGNATURE");
      if (signature) sent.push(signature);
      return gatewayFetch(request);
    };
    expect((await b.scheme.refund(call(shop, "refund"), { fetch: recording })).success).toBe(true);
    const after = await balanceOf(b.account.address);
    const again = await withVoucher(call(shop, "refund"), sent.at(-1) as string);
    expect(again.status).toBe(402);
    expect(await balanceOf(b.account.address)).toBe(after);
  });

  it("a refund asked at the URL of the last paid call is a refund, not that call's kept answer", async () => {
    // The refund's voucher is the last call's (nothing more is charged): the same signature, at the same URL.
    const { shop, b } = await openChannel(2);
    const before = await balanceOf(b.account.address);
    const refunded = await b.scheme.refund(call(shop, 2), { fetch: gatewayFetch });
    expect(refunded.success).toBe(true);
    expect(BigInt(refunded.amount ?? "0")).toBe(DEPOSIT - 2n * PRICE);
    expect(await balanceOf(b.account.address)).toBe(before + DEPOSIT - 2n * PRICE);
  });
});
