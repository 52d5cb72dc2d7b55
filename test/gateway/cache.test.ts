// The edge cache of paid answers (`cacheRules`): an answer that is the same for every buyer is served from the Workers
// Cache API to the next buyer who pays for the same request, without calling the upstream; every buyer still pays
// (verify, settle, then answer), and nothing personal or made under an older configuration is ever served.
import { Receipt } from "mppx";
import { describe, expect, it, vi } from "vitest";
import type { Event } from "../../src/api/routes/history-records.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { api, send } from "../support/client.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  openShop,
  type Shop,
  settlementsOf,
  signedPayment,
  upstreamRequests,
} from "./support.ts";
import { mppShop, TEMPO_RPC, tempo, tempoBalanceOf } from "./tempo-support.ts";

// Most tests pay four times in a row (and the MPP one loads mppx first): more than the default 5 s on a busy machine.
vi.setConfig({ testTimeout: 30_000 });

const CACHED = { cacheRules: { ttlSeconds: 60 } };

/** One paid request: a fresh payment for the shop's current terms, sent (through a settlement fault, if given). */
async function pay(url: string, init: { headers?: Record<string, string>; fault?: "send-dropped" } = {}) {
  const { header, nonce } = await signedPayment(url);
  const res = await send(
    new Request(url, { headers: { ...init.headers, "PAYMENT-SIGNATURE": header } }),
    (init.fault
      ? { ...GATEWAY_ENV, FACILITATOR_URL_TESTNET: FACILITATOR.replace("https://", `https://${init.fault}.`) }
      : GATEWAY_ENV) as Partial<Env>,
  );
  return { status: res.status, headers: res.headers, body: await res.text(), nonce };
}

const cacheOf = (events: Event[]) =>
  events
    .filter((e) => e.eventType === "SUCCESS")
    .map((e) => (e.metadata as { cache?: string } | null)?.cache ?? null)
    .sort();

async function expectPaidTwice(shop: Shop, price: bigint, nonces: string[]) {
  for (const nonce of nonces) expect(await settlementsOf(nonce)).toHaveLength(1);
  expect(await balanceOf(shop.merchant)).toBe(price * BigInt(nonces.length));
  const { transactions } = await history(shop);
  expect(transactions.map((t) => [t.status, t.amount])).toEqual(nonces.map(() => ["COMPLETED", String(price)]));
}

describe("a paywall with cacheRules {ttlSeconds: 60}", () => {
  it("two buyers within a minute: both 200 with the same body, both charged the price, the upstream called once", async () => {
    const shop = await openShop({ price: "2100", paywall: CACHED });
    const first = await pay(shop.x402);
    const second = await pay(shop.x402);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toBe(first.body);
    expect(first.headers.get("X-Cache")).toBe("MISS");
    expect(second.headers.get("X-Cache")).toBe("HIT");
    expect(Number(second.headers.get("Age"))).toBeGreaterThanOrEqual(0);
    expect(first.headers.get("Age")).toBeNull();
    // Each answer carries its own payment's receipt, never the first buyer's.
    expect(second.headers.get("Payment-Transaction-Id")).not.toBe(first.headers.get("Payment-Transaction-Id"));
    expect(second.headers.get("PAYMENT-RESPONSE")).not.toBe(first.headers.get("PAYMENT-RESPONSE"));
    expect(second.headers.get("Cache-Control")).toMatch(/^private/);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    await expectPaidTwice(shop, 2100n, [first.nonce, second.nonce]);
    expect(cacheOf((await history(shop)).events)).toEqual(["hit", "miss"]);
  });

  it("a hit is answered only once its payment settled: a settlement that cannot be confirmed gets 502, not the answer", async () => {
    const shop = await openShop({ price: "2200", paywall: CACHED });
    const first = await pay(shop.x402);
    expect(first.status).toBe(200);
    const unsettled = await pay(shop.x402, { fault: "send-dropped" });
    expect(unsettled.status).toBe(502);
    expect(JSON.parse(unsettled.body)).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect(unsettled.body).not.toContain(shop.prefix);
    expect(await settlementsOf(unsettled.nonce)).toEqual([]);
    expect(await balanceOf(shop.merchant)).toBe(2200n);
    const { transactions } = await history(shop);
    expect(transactions.map((t) => t.status).sort()).toEqual(["COMPLETED", "PENDING"]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("the query varies the key by default; varyQuery names the parameters that do", async () => {
    const shop = await openShop({ price: "2300", paywall: { cacheRules: { ttlSeconds: 60, varyQuery: ["city"] } } });
    const paris = await pay(`${shop.x402}?city=paris&utm=a`);
    const parisAgain = await pay(`${shop.x402}?utm=b&city=paris`);
    const rome = await pay(`${shop.x402}?city=rome`);
    expect([paris.headers.get("X-Cache"), parisAgain.headers.get("X-Cache"), rome.headers.get("X-Cache")]).toEqual([
      "MISS",
      "HIT",
      "MISS",
    ]);
    expect(parisAgain.body).toBe(paris.body);
    expect(JSON.parse(rome.body).query).toBe("city=rome");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);

    const whole = await openShop({ price: "2300", paywall: CACHED });
    await pay(`${whole.x402}?city=paris&utm=a`);
    expect((await pay(`${whole.x402}?city=paris&utm=b`)).headers.get("X-Cache")).toBe("MISS");
    expect(await upstreamRequests(whole.prefix)).toHaveLength(2);
  });
});

describe("MPP takes the same path", () => {
  it("two buyers over MPP: the second answered from the cache with its own receipt; the recipient gains twice the price", async () => {
    const shop = await mppShop({ price: "3100", paywall: CACHED });
    const answers = [];
    for (const account of tempo.buyers.slice(0, 2)) {
      const buyer = createMppBuyer({
        privateKey: account.privateKey,
        rpcUrl: TEMPO_RPC,
        chainId: tempo.chainId,
        fetch: gatewayFetch,
      });
      const res = await buyer.fetch(shop.mpp);
      answers.push({
        status: res.status,
        body: await res.text(),
        cache: res.headers.get("X-Cache"),
        receipt: Receipt.fromResponse(res),
      });
    }
    expect(answers.map((a) => [a.status, a.cache])).toEqual([
      [200, "MISS"],
      [200, "HIT"],
    ]);
    expect(answers[1]?.body).toBe(answers[0]?.body);
    expect(answers[1]?.receipt.reference).not.toBe(answers[0]?.receipt.reference);
    expect(await tempoBalanceOf(shop.recipient)).toBe(6200n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});

describe("answers that are never shared", () => {
  it("ttlSeconds 0: the upstream is called for every buyer, and nothing says cache", async () => {
    const shop = await openShop({ price: "2400", paywall: { cacheRules: { ttlSeconds: 0 } } });
    const [a, b] = [await pay(shop.x402), await pay(shop.x402)];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get("X-Cache")).toBeNull();
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);
    await expectPaidTwice(shop, 2400n, [a.nonce, b.nonce]);
    expect(cacheOf((await history(shop)).events)).toEqual([null, null]);
  });

  it("a bearer-customer service: each buyer's own credential reaches the upstream, each answer is the buyer's", async () => {
    const shop = await openShop({ price: "2500", authMethod: "bearer-customer", paywall: CACHED });
    const alice = await pay(shop.x402, { headers: { Authorization: "Bearer alice-token" } });
    const bob = await pay(shop.x402, { headers: { Authorization: "Bearer bob-token" } });
    expect([alice.status, bob.status]).toEqual([200, 200]);
    expect(bob.body).toContain("bob-token");
    expect(bob.body).not.toContain("alice-token");
    expect(bob.headers.get("X-Cache")).toBeNull();
    expect((await upstreamRequests(shop.prefix)).map((r) => r.headers.authorization)).toEqual([
      "Bearer alice-token",
      "Bearer bob-token",
    ]);
  });

  it.each([
    ["Set-Cookie", "/header/set-cookie/session%3Dalice/echo"],
    ["Cache-Control: private", "/header/cache-control/private%2C%20max-age%3D60/echo"],
    ["Cache-Control: no-store", "/header/cache-control/no-store/echo"],
    ["Vary: *", "/header/vary/*/echo"],
  ])("an answer with %s is not stored: the next buyer's request reaches the upstream", async (_, route) => {
    const shop = await openShop({ price: "2600", route, paywall: CACHED });
    const [a, b] = [await pay(shop.x402), await pay(shop.x402)];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.headers.get("X-Cache"), b.headers.get("X-Cache")]).toEqual(["MISS", "MISS"]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);
  });

  it("a status outside statuses is not stored (default [200]); one listed is", async () => {
    const shop = await openShop({ price: "2700", route: "/status/203", paywall: CACHED });
    await pay(shop.x402);
    expect((await pay(shop.x402)).headers.get("X-Cache")).toBe("MISS");
    const listed = await openShop({
      price: "2700",
      route: "/status/203",
      paywall: { cacheRules: { ttlSeconds: 60, statuses: [203] } },
    });
    await pay(listed.x402);
    const hit = await pay(listed.x402);
    expect([hit.status, hit.headers.get("X-Cache")]).toEqual([203, "HIT"]);
    expect(await upstreamRequests(listed.prefix)).toHaveLength(1);
  });
});

describe("a configuration change is never answered from before it", () => {
  it("a price change makes the next request a miss (and the one after a hit at the new price)", async () => {
    const shop = await openShop({ price: "2800", paywall: CACHED });
    expect((await pay(shop.x402)).headers.get("X-Cache")).toBe("MISS");
    expect((await pay(shop.x402)).headers.get("X-Cache")).toBe("HIT");
    const patched = await api(`/v1/paywalls/${shop.paywallId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { price: "2900" },
    });
    expect(patched.status, patched.text).toBe(200);
    const after = await pay(shop.x402);
    expect(after.headers.get("X-Cache")).toBe("MISS");
    expect((await pay(shop.x402)).headers.get("X-Cache")).toBe("HIT");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);
    expect(await balanceOf(shop.merchant)).toBe(2800n * 2n + 2900n * 2n);
  });

  it("a change of the service's credentials: the next buyer gets an answer made with the new one, never the old", async () => {
    const shop = await openShop({
      price: "3000",
      authMethod: "bearer",
      authConfig: { bearerToken: "old-token" },
      paywall: CACHED,
    });
    expect((await pay(shop.x402)).body).toContain("old-token");
    const patched = await api(`/v1/services/${shop.serviceId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { authConfig: { bearerToken: "new-token" } },
    });
    expect(patched.status, patched.text).toBe(200);
    const after = await pay(shop.x402);
    expect(after.headers.get("X-Cache")).toBe("MISS");
    expect(after.body).toContain("new-token");
    expect(after.body).not.toContain("old-token");
  });
});

describe("the key holds everything that reaches the upstream", () => {
  /** The preview's CACHE_KEY diagnostic of a shop's paywall: which inputs its cached answers are keyed by. */
  const keyedInputs = async (shop: Shop) => {
    const preview = await api(`/v1/services/${shop.serviceId}/discovery`, { key: shop.actor.key });
    expect(preview.status, preview.text).toBe(200);
    const found = preview.body.data.diagnostics.filter((d: { code: string }) => d.code === "CACHE_KEY");
    expect(found).toEqual([expect.objectContaining({ severity: "info", paywallId: shop.paywallId })]);
    return found[0].message as string;
  };

  it("varyQuery [city]: ?city=lisbon&inject=X forwards city alone, so it cannot shape the next ?city=lisbon answer", async () => {
    const shop = await openShop({ price: "3200", paywall: { cacheRules: { ttlSeconds: 60, varyQuery: ["city"] } } });
    const alice = await pay(`${shop.x402}?city=lisbon&inject=X`);
    const bob = await pay(`${shop.x402}?city=lisbon`);
    expect([alice.status, bob.status]).toEqual([200, 200]);
    expect([alice.headers.get("X-Cache"), bob.headers.get("X-Cache")]).toEqual(["MISS", "HIT"]);
    expect(JSON.parse(bob.body).query).toBe("city=lisbon");
    expect(bob.body).not.toContain("inject");
    expect((await upstreamRequests(shop.prefix)).map((r) => r.query)).toEqual(["city=lisbon"]);
    await expectPaidTwice(shop, 3200n, [alice.nonce, bob.nonce]);
    expect(await keyedInputs(shop)).toMatch(
      /the query parameters city \(the only ones forwarded\), headers accept, content-type and body/,
    );
  });

  it("varyHeaders [accept], then allowedHeaders [X-User-Token]: Bob gets his own upstream answer, never Alice's token", async () => {
    const shop = await openShop({
      price: "3300",
      paywall: { cacheRules: { ttlSeconds: 60, varyHeaders: ["accept"] } },
      allowedHeaders: ["X-User-Token"],
    });
    const as = (token: string) => ({ headers: { Accept: "application/json", "X-User-Token": token } });
    const alice = await pay(shop.x402, as("alice-token"));
    const bob = await pay(shop.x402, as("bob-token"));
    expect([alice.status, bob.status]).toEqual([200, 200]);
    expect(bob.headers.get("X-Cache")).toBe("MISS");
    expect(JSON.parse(bob.body).headers["x-user-token"]).toBe("bob-token");
    expect(bob.body).not.toContain("alice-token");
    // The same forwarded request again is still shared.
    const aliceAgain = await pay(shop.x402, as("alice-token"));
    expect(aliceAgain.headers.get("X-Cache")).toBe("HIT");
    expect(aliceAgain.body).toBe(alice.body);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(2);
    expect(await keyedInputs(shop)).toMatch(/the whole query string, headers accept, content-type, x-user-token and body/);
  });
});
