// Sessions' settlement in batches, inside workerd on the local chain and facilitator: channels opened and charged by
// the official client (`@x402/fetch` + `BatchSettlementEvmScheme`) against `@x402/evm`'s server scheme over the
// Durable Object channel storage, then settled by the alarm of their receiver's index object (src/core/sessions/
// settlement.ts): one claim transaction and one settle transfer for every channel, records once, idle channels
// refunded.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { x402Client } from "@x402/core/client";
import type { HTTPAdapter, HTTPRequestContext } from "@x402/core/server";
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as ClientScheme } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Address, createPublicClient, createWalletClient, erc20Abi, type Hex, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { DurableChannelStorage, sessionScope } from "../../../src/core/sessions/channel-storage.ts";
import type { ChannelMeta } from "../../../src/core/sessions/serve.ts";
import { settlementTransactionId } from "../../../src/core/sessions/settlement.ts";
import type { Tenant } from "../../../src/db/schema.ts";
import { createTenant, insertRows, paywallRow } from "../../support/factories.ts";

const net = inject("localnet");
const NETWORK = net.network as Network;
const PRICE = 1_000n; // 0.001 USDC per call
const FACILITATOR = "https://facilitator.gateway.test";
const RPC = "https://rpc.gateway.test";
/** The receiver authorizer vitest.gateway.config.ts binds as SESSION_AUTHORIZER_KEY (a test key). */
const AUTHORIZER_KEY: Hex = `0x${"5e".repeat(32)}`;
/** SESSION_IDLE_REFUND_SECONDS of vitest.gateway.config.ts. */
const IDLE_SECONDS = 5;

const chain = createPublicClient({ transport: http(RPC), pollingInterval: 100 });
const minter = createWalletClient({ account: privateKeyToAccount(net.buyer.privateKey), transport: http(RPC) });
const balanceOf = (address: Address) =>
  chain.readContract({ address: net.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [address] });
const channelEvents = parseAbi([
  "event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 totalClaimed, uint128 amount)",
  "event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)",
  "event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount)",
]);
const eventsOf = async (receiver: Address) => {
  const logs = await chain.getContractEvents({ address: BATCH_SETTLEMENT_ADDRESS, abi: channelEvents, fromBlock: 0n });
  const mine = logs.filter((l) => (l.args as { receiver?: Address }).receiver === receiver);
  return {
    claims: mine.filter((l) => l.eventName === "Claimed"),
    settles: mine.filter((l) => l.eventName === "Settled"),
    refunds: logs.filter((l) => l.eventName === "Refunded"),
  };
};

/** One at a time: every mint is sent by the stack's buyer account. */
let minting: Promise<unknown> = Promise.resolve();
async function fundedBuyer(amount: bigint) {
  const key = generatePrivateKey();
  const address = privateKeyToAddress(key);
  const minted = minting.then(async () => {
    const hash = await minter.writeContract({
      chain: null,
      address: net.usdc.address,
      abi: parseAbi(["function mint(address to, uint256 amount)"]),
      functionName: "mint",
      args: [address, amount],
    });
    await chain.waitForTransactionReceipt({ hash });
  });
  minting = minted.catch(() => {});
  await minted;
  return key;
}

/**
 * A paid route of one paywall, made of the standard's own server code (as test/localnet/batch-settlement-server.ts)
 * on the Durable Object channel storage of the receiver's scope, answered inside this isolate.
 */
async function sessionRoute(receiver: Address) {
  const facilitator = new HTTPFacilitatorClient({ url: FACILITATOR });
  const scheme = new BatchSettlementEvmScheme(receiver, {
    storage: new DurableChannelStorage(env.CHANNELS, sessionScope(NETWORK, receiver)),
    receiverAuthorizerSigner: privateKeyToAccount(AUTHORIZER_KEY),
    withdrawDelay: 900,
  });
  const server = new x402HTTPResourceServer(new x402ResourceServer(facilitator).register(NETWORK, scheme), {
    "GET /*": {
      accepts: {
        scheme: "batch-settlement",
        network: NETWORK,
        payTo: receiver,
        price: {
          amount: PRICE.toString(),
          asset: net.usdc.address,
          extra: { name: net.usdc.name, version: net.usdc.version },
        },
        maxTimeoutSeconds: 60,
      },
    },
  });
  await server.initialize();
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const adapter: HTTPAdapter = {
      getHeader: (name) => request.headers.get(name) ?? undefined,
      getMethod: () => request.method,
      getPath: () => url.pathname,
      getUrl: () => url.toString(),
      getAcceptHeader: () => request.headers.get("accept") ?? "",
      getUserAgent: () => "",
    };
    const context: HTTPRequestContext = { adapter, path: url.pathname, method: request.method };
    const answer = (status: number, headers: Record<string, string>, body: unknown) => {
      const all = new Headers(headers);
      if (!all.has("content-type")) all.set("content-type", "application/json");
      return new Response(typeof body === "string" ? body : JSON.stringify(body ?? {}), { status, headers: all });
    };
    const result = await server.processHTTPRequest(context);
    if (result.type === "payment-error") return answer(result.response.status, result.response.headers, result.response.body);
    if (result.type === "no-payment-required") return answer(200, {}, "{}");
    const body = '{"ok":true}';
    const settled = await server.processSettlement(result.paymentPayload, result.paymentRequirements, result.declaredExtensions, {
      request: context,
      responseBody: Buffer.from(body),
    });
    if (!settled.success) return answer(settled.response.status, settled.response.headers, settled.response.body);
    return answer(200, settled.headers, body);
  };
}

interface Session {
  buyer: Address;
  channelId: string;
  /** The channel's object (`channel:<network>:<receiver>:<id>`, channel-storage.ts). */
  object: DurableObjectStub<import("../../../src/index").ChannelObject>;
  deposit: bigint;
  charged: bigint;
  /** Pays one more call on the channel (the buyer's client, by voucher). */
  pay: (path: string) => Promise<Response>;
  /** The buyer's `refund()`: the rest of the deposit back. */
  refund: () => ReturnType<ClientScheme["refund"]>;
}

/** A fresh buyer opens a channel with `receiver` on `paywallId` of `tenant` and pays `calls` calls. */
async function openSession(tenant: Tenant, paywallId: string, receiver: Address, calls: number): Promise<Session> {
  const route = await sessionRoute(receiver);
  const account = privateKeyToAccount(await fundedBuyer(1_000_000n));
  const buyerScheme = new ClientScheme(toClientEvmSigner(account, chain), { rpcUrl: RPC });
  const client = new x402Client().register(NETWORK, buyerScheme);
  client.setSpendControls({
    allowedAssets: [{ network: NETWORK, asset: net.usdc.address, maxAmountPerPayment: "100000" }],
  });
  const pay = wrapFetchWithPayment((input, init) => route(new Request(input, init)), client);
  for (let i = 0; i < calls; i++) expect((await pay(`https://shop.test/${paywallId}/${i}`)).status).toBe(200);
  const storage = new DurableChannelStorage(env.CHANNELS, sessionScope(NETWORK, receiver));
  const channel = (await storage.list()).find((c) => c.channelConfig.payer === account.address);
  if (!channel) throw new Error("no channel was opened");
  const channelId = channel.channelId.toLowerCase();
  const object = env.CHANNELS.getByName(`channel:${sessionScope(NETWORK, receiver)}:${channelId}`);
  // What the deposit binds the channel to (the gateway's session path writes it).
  const meta: ChannelMeta = {
    tenantId: tenant.id,
    paywallId,
    serviceId: null,
    network: net.networkId,
    currency: "USDC",
    openedAt: Date.now(),
  };
  await runInDurableObject(object, (_, state) => state.storage.kv.put("meta", meta));
  return {
    buyer: account.address,
    channelId,
    object,
    deposit: BigInt(channel.balance),
    charged: BigInt(channel.chargedCumulativeAmount),
    pay: (path) => pay(`https://shop.test/${paywallId}/${path}`),
    refund: () =>
      buyerScheme.refund(`https://shop.test/${paywallId}/refund`, {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => route(new Request(input, init)),
      }),
  };
}

/** A tenant paid at a fresh wallet, with `count` paywalls. */
async function shop(count: number) {
  const receiver = privateKeyToAddress(generatePrivateKey());
  const tenant = await createTenant({ walletAddress: receiver });
  const paywalls = Array.from({ length: count }, () => `pw_${crypto.randomUUID().replaceAll("-", "")}`);
  await insertRows(
    "paywalls",
    paywalls.map((id) => paywallRow(tenant, id, { merchantWallet: receiver })),
  );
  const index = env.CHANNELS.getByName(`index:${sessionScope(NETWORK, receiver)}`);
  return { receiver, tenant, paywalls, index };
}

/** A channel's row in the read model (D1), once `done` holds of it or 10 s passed. */
async function channelRowOf(channelId: string, done: (row: Record<string, unknown> | null) => boolean) {
  const read = () => env.DB.prepare("SELECT * FROM channels WHERE id = ?").bind(channelId).first<Record<string, unknown>>();
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    const row = await read();
    if (done(row)) return row;
    await new Promise((r) => setTimeout(r, 200));
  }
  return read();
}

/**
 * A channel's settlement transactions in D1 (the read model), by the ids its settlements derive (`claimed` totals),
 * once `count` landed or 10 s passed.
 */
async function settlementRows(channelId: string, claimed: bigint[], count = claimed.length) {
  const ids = await Promise.all(claimed.map((c) => settlementTransactionId(channelId, c.toString())));
  const read = async () =>
    (
      await env.DB.prepare(
        `SELECT id, amount, tx_hash, status, payer_address, paywall_id FROM transactions WHERE id IN (${ids.map(() => "?").join(", ")})`,
      )
        .bind(...ids)
        .all<{ id: string; amount: string; tx_hash: string; status: string; payer_address: string; paywall_id: string }>()
    ).results;
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    const rows = await read();
    if (rows.length >= count) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
  return read();
}

describe("settlement in batches, from the index object's alarm", () => {
  it("claims the channels of two paywalls in one transaction and settles exactly what was charged in one transfer", async () => {
    const { receiver, tenant, paywalls, index } = await shop(2);
    const a = await openSession(tenant, paywalls[0]!, receiver, 3);
    const b = await openSession(tenant, paywalls[1]!, receiver, 2);
    expect([a.charged, b.charged]).toEqual([3n * PRICE, 2n * PRICE]);
    // The index armed its alarm when it first listed a channel.
    expect(await runInDurableObject(index, (_, state) => state.storage.getAlarm())).not.toBeNull();

    expect(await runDurableObjectAlarm(index)).toBe(true);

    const { claims, settles } = await eventsOf(receiver);
    expect(claims).toHaveLength(2);
    expect(new Set(claims.map((c) => c.transactionHash)).size).toBe(1);
    expect(settles).toHaveLength(1);
    expect(await balanceOf(receiver)).toBe(5n * PRICE);
    const settleTx = settles[0]!.transactionHash;

    // Each channel's records: its settlement as a COMPLETED transaction of what it moved, and its row.
    for (const [s, paywallId] of [
      [a, paywalls[0]!],
      [b, paywalls[1]!],
    ] as const) {
      const id = await settlementTransactionId(s.channelId, s.charged.toString());
      const rows = await settlementRows(s.channelId, [s.charged]);
      expect(rows).toEqual([
        {
          id,
          amount: s.charged.toString(),
          tx_hash: settleTx,
          status: "COMPLETED",
          payer_address: s.buyer.toLowerCase(),
          paywall_id: paywallId,
        },
      ]);
      // The channel's row in the read model: claimed and settled in full, through the object's outbox and the queue.
      const row = await channelRowOf(s.channelId, (r) => r?.settled === s.charged.toString());
      expect(row).toMatchObject({
        charged: s.charged.toString(),
        claimed: s.charged.toString(),
        settled: s.charged.toString(),
        deposit: s.deposit.toString(),
        paywall_id: paywallId,
      });
    }
    // Re-armed for the next run while it lists channels.
    expect(await runInDurableObject(index, (_, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now());
  });

  it("a run with nothing new sends no transaction and records nothing; a settlement told again is recorded once", async () => {
    const { receiver, tenant, paywalls, index } = await shop(1);
    const s = await openSession(tenant, paywalls[0]!, receiver, 2);
    await runDurableObjectAlarm(index);
    const first = await eventsOf(receiver);
    expect([first.claims.length, first.settles.length]).toEqual([1, 1]);
    expect(await channelRowOf(s.channelId, (r) => r?.settled === "2000")).toMatchObject({ seq: 1, settled: "2000" });

    await runInDurableObject(index, (_, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(index);
    const second = await eventsOf(receiver);
    expect([second.claims.length, second.settles.length]).toEqual([1, 1]);

    // The same settlement told to the channel's object again (a run retried): nothing more to send or keep.
    const again = await s.object.settled({
      claimed: s.charged.toString(),
      txHash: first.settles[0]!.transactionHash,
      at: Date.now(),
    });
    expect(again).toBe(false);
    const rows = await settlementRows(s.channelId, [s.charged]);
    expect(rows.map((r) => [r.id, r.amount])).toEqual([[await settlementTransactionId(s.channelId, "2000"), "2000"]]);
    expect(await env.DB.prepare("SELECT seq FROM channels WHERE id = ?").bind(s.channelId).first()).toEqual({ seq: 1 });
    expect(await balanceOf(receiver)).toBe(2n * PRICE);

    // One more call: the next settlement moves (and records) that call alone.
    expect((await s.pay("more")).status).toBe(200);
    await runInDurableObject(index, (_, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(index);
    const third = await eventsOf(receiver);
    expect([third.claims.length, third.settles.length]).toEqual([2, 2]);
    const both = await settlementRows(s.channelId, [2n * PRICE, 3n * PRICE]);
    expect(both.map((r) => r.amount).sort()).toEqual(["1000", "2000"]);
    expect(both.find((r) => r.amount === "1000")?.tx_hash).toBe(third.settles[1]!.transactionHash);
    expect(await balanceOf(receiver)).toBe(3n * PRICE);
  });

  it("a channel refunded by its buyer before any run: the next run settles what the refund claimed; the row CLOSED", async () => {
    const { receiver, tenant, paywalls, index } = await shop(1);
    const s = await openSession(tenant, paywalls[0]!, receiver, 4);
    const refunded = await s.refund();
    expect(refunded.success).toBe(true);
    expect(BigInt(refunded.amount ?? "0")).toBe(s.deposit - s.charged);
    // Claimed by the refund, not in the wallet yet.
    expect(await balanceOf(receiver)).toBe(0n);

    await runDurableObjectAlarm(index);

    expect(await balanceOf(receiver)).toBe(s.charged);
    const rows = await settlementRows(s.channelId, [s.charged]);
    expect(rows.map((r) => r.amount)).toEqual([s.charged.toString()]);
    const charged = s.charged.toString();
    expect(await channelRowOf(s.channelId, (r) => r?.settled === charged)).toMatchObject({
      status: "CLOSED",
      charged,
      claimed: charged,
      settled: charged,
    });
    // Nothing more owed: the index stops once it lists nothing.
    expect(await runInDurableObject(index, (_, state) => [...state.storage.kv.list({ prefix: "closed:" })])).toEqual([]);
  });

  it("refunds a channel idle past SESSION_IDLE_REFUND_SECONDS: its buyer gets back exactly deposit − charged", async () => {
    const { receiver, tenant, paywalls, index } = await shop(1);
    const s = await openSession(tenant, paywalls[0]!, receiver, 3);
    const before = await balanceOf(s.buyer);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000 + 500));

    await runDurableObjectAlarm(index);

    expect(await balanceOf(s.buyer)).toBe(before + s.deposit - s.charged);
    expect(await balanceOf(receiver)).toBe(s.charged);
    const { refunds } = await eventsOf(receiver);
    expect(refunds.filter((r) => (r.args as { channelId: string }).channelId === s.channelId)).toHaveLength(1);
    // Settled before its refund: the charge recorded with its settle transfer.
    const rows = await settlementRows(s.channelId, [s.charged]);
    expect(rows.map((r) => r.amount)).toEqual([s.charged.toString()]);
    // Nothing left to list: the channel is gone from the index, whose alarm then stops.
    expect(await runInDurableObject(index, (instance) => instance.tracked())).toEqual([]);
    expect(await runInDurableObject(index, (_, state) => state.storage.getAlarm())).toBeNull();
  });
});
