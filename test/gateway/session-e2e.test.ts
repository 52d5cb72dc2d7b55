// An x402 session end to end, as a tenant and a buyer see it: the official client (`BatchSettlementEvmScheme` through
// `@x402/fetch`) deposits once and pays 100 calls by voucher at the gateway's x402 URL; the index object's own alarm
// (SESSION_SETTLE_INTERVAL_SECONDS = 10 in vitest.gateway.config.ts; nothing here runs it by hand) settles them to the
// tenant's wallet; the tenant reads the channel, its settlement and its events through the management API; the buyer's
// refund() returns the rest. The cases share one session and run in order.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { erc20Abi, type Hex, parseAbi } from "viem";
import { describe, expect, it } from "vitest";
import type { Event, Transaction } from "../../src/api/routes/history-records.ts";
import { sessionScope } from "../../src/core/sessions/channel-storage.ts";
import { api } from "../support/client.ts";
import { chain, sessionBuyer as sessionBuyerOf } from "./session-support.ts";
import { balanceOf, gatewayFetch, net, openShop, type Shop, upstreamRequests, waitFor } from "./support.ts";

const PRICE = 1_000n;
const CALLS = 100;
const FUNDS = 1_000_000n;
/** The least deposit: enough for the 100 calls and a few more. */
const DEPOSIT = 120n * PRICE;
const sessionEvents = parseAbi([
  "event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount)",
  "event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 totalClaimed, uint128 amount)",
  "event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)",
  "event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount)",
]);

/** A paywall with sessions on, turned on through the management API as its tenant would. */
async function sessionShop(route = "/echo"): Promise<Shop> {
  const shop = await openShop({ price: PRICE.toString(), route });
  const res = await api(`/v1/paywalls/${shop.paywallId}`, {
    key: shop.actor.key,
    method: "PATCH",
    body: { sessions: { enabled: true, minDeposit: DEPOSIT.toString() } },
  });
  expect(res.status, res.text).toBe(200);
  return shop;
}

/** A buyer of its own with 1 USDC and gas, paying through the official client. */
const sessionBuyer = () => sessionBuyerOf({ funds: FUNDS, cap: "1000000" });

const channelIdOf = (res: Response) => {
  const header = res.headers.get("PAYMENT-RESPONSE");
  const extra = header ? (decodePaymentResponseHeader(header).extra as { channelState?: { channelId: Hex } }) : undefined;
  return extra?.channelState?.channelId?.toLowerCase() as Hex;
};

interface ChannelView {
  id: string;
  deposit: string;
  charged: string;
  claimed: string;
  settled: string;
  unsettled: string;
  status: string;
}

/** The tenant's channels, as GET /v1/channels shows them. */
async function channelsOf(shop: Shop): Promise<ChannelView[]> {
  const res = await api("/v1/channels?limit=100", { key: shop.actor.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as ChannelView[];
}

/** The tenant's view of one channel once `done` holds of it (the read model lands a moment behind), or after `ms`. */
async function channelWhen(shop: Shop, id: string, done: (c: ChannelView) => boolean, ms = 15_000) {
  const seen = () => channelsOf(shop).then((all) => all.find((c) => c.id === id));
  return waitFor(async () => {
    const c = await seen();
    return c && done(c) ? c : undefined;
  }, ms).catch(async () => seen());
}

/** Every page of a list of the management API. */
async function allOf<T>(shop: Shop, path: string): Promise<T[]> {
  const rows: T[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await api(`${path}${path.includes("?") ? "&" : "?"}limit=100&offset=${offset}`, { key: shop.actor.key });
    expect(res.status, res.text).toBe(200);
    rows.push(...(res.body.data as T[]));
    if ((res.body.data as T[]).length < 100) return rows;
  }
}

/** The session's transactions on chain from `fromBlock`: every transaction that logged an event of the channel. */
async function sessionTransactions(channelId: string, receiver: string, fromBlock: bigint) {
  const logs = await chain.getContractEvents({ address: BATCH_SETTLEMENT_ADDRESS, abi: sessionEvents, fromBlock });
  const ours = logs.filter((l) => {
    const args = l.args as { channelId?: string; receiver?: string };
    return (
      args.channelId?.toLowerCase() === channelId || (l.eventName === "Settled" && args.receiver?.toLowerCase() === receiver)
    );
  });
  const kinds = new Map<string, Set<string>>();
  for (const l of ours) kinds.set(l.transactionHash, (kinds.get(l.transactionHash) ?? new Set()).add(l.eventName));
  return [...kinds.values()].map((names) => [...names].sort().join("+"));
}

/**
 * Waits until the next settlement run of the shop's index object (its alarm, armed when the channel opened) is about
 * 2.5 s away: the last call then lands before that run and less than SESSION_IDLE_REFUND_SECONDS (5 s) before it, so
 * the run settles all the calls and leaves the channel open for its buyer's own refund().
 */
async function lastCallBeforeTheRun(shop: Shop) {
  const index = env.CHANNELS.getByName(`index:${sessionScope(net.network, shop.merchant)}`);
  await waitFor(async () => {
    const at = await runInDurableObject(index, (_, state) => state.storage.getAlarm());
    const ahead = at === null ? 0 : at - Date.now();
    return ahead > 2_000 && ahead < 3_000 ? true : undefined;
  }, 15_000);
}

describe("a session of 100 calls, as its tenant and its buyer see it", () => {
  let shop: Shop;
  let b: Awaited<ReturnType<typeof sessionBuyer>>;
  let channelId: Hex;
  let fundsBefore: bigint;
  let firstBlock: bigint;
  let lastCallAt: number;
  const total = BigInt(CALLS) * PRICE;

  it("one deposit, then 100 calls each answered by the upstream: one token transfer from the buyer on chain", async () => {
    shop = await sessionShop();
    b = await sessionBuyer();
    fundsBefore = await balanceOf(b.account.address);
    firstBlock = (await chain.getBlockNumber()) + 1n;
    for (let n = 1; n <= CALLS; n++) {
      if (n === CALLS) await lastCallBeforeTheRun(shop);
      const res = await b.fetch(`${shop.x402}?call=${n}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as { query: string }).query).toContain(`call=${n}`);
      channelId ??= channelIdOf(res);
    }
    lastCallAt = Date.now();
    const lastBlock = await chain.getBlockNumber();
    expect(channelId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(CALLS);
    const transfers = await chain.getContractEvents({
      address: net.usdc.address,
      abi: erc20Abi,
      eventName: "Transfer",
      args: { from: b.account.address },
      fromBlock: firstBlock,
      toBlock: lastBlock,
    });
    expect(transfers.map((t) => t.args.value)).toEqual([DEPOSIT]);
    expect(await balanceOf(b.account.address)).toBe(fundsBefore - DEPOSIT);
  }, 120_000);

  it("within 30 s, by the alarm alone, the wallet gains 100 × price and the API shows it settled", async () => {
    const wallet = await waitFor(async () => {
      const balance = await balanceOf(shop.merchant);
      return balance >= total ? balance : undefined;
    }, 30_000);
    expect(wallet).toBe(total);
    expect(Date.now() - lastCallAt).toBeLessThan(30_000);

    const channel = await channelWhen(shop, channelId, (c) => c.settled === total.toString());
    expect(channel).toMatchObject({
      id: channelId,
      deposit: DEPOSIT.toString(),
      charged: total.toString(),
      claimed: total.toString(),
      settled: total.toString(),
      unsettled: "0",
    });

    const settlements = await waitFor(async () => {
      const rows = (await allOf<Transaction>(shop, `/v1/transactions?paywallId=${shop.paywallId}`)).filter(
        (t) => t.channelId === channelId,
      );
      return rows.reduce((sum, t) => sum + BigInt(t.amount), 0n) >= total ? rows : undefined;
    });
    expect(settlements).toEqual([
      expect.objectContaining({
        channelId,
        amount: total.toString(),
        status: "COMPLETED",
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      }),
    ]);

    const events = await waitFor(async () => {
      const rows = (await allOf<Event>(shop, `/v1/events?paywallId=${shop.paywallId}&eventType=SUCCESS`)).filter(
        (e) => (e.metadata as { channelId?: string } | null)?.channelId === channelId,
      );
      return rows.length >= CALLS ? rows : undefined;
    });
    expect(events).toHaveLength(CALLS);
    expect(events.every((e) => e.amount === PRICE.toString())).toBe(true);

    // Per tenant: what was charged is settled or still to settle, to the micro-unit.
    const all = await channelsOf(shop);
    const sum = (field: keyof ChannelView) => all.reduce((s, c) => s + BigInt(c[field]), 0n);
    expect(sum("charged")).toBe(sum("settled") + sum("unsettled"));
  }, 60_000);

  it("after the client's refund() the buyer has spent exactly 100 × price", async () => {
    const refunded = await b.scheme.refund(`${shop.x402}?call=refund`, { fetch: gatewayFetch });
    expect(refunded.success).toBe(true);
    expect(BigInt(refunded.amount ?? "0")).toBe(DEPOSIT - total);
    expect(fundsBefore - (await balanceOf(b.account.address))).toBe(total);
  }, 60_000);

  it("a call whose upstream fails is not charged, and the same voucher pays the next call", async () => {
    const other = await sessionShop();
    const buyer = await sessionBuyer();
    const opened = await buyer.fetch(`${other.x402}?call=1`);
    expect(opened.status, await opened.clone().text()).toBe(200);
    const id = channelIdOf(opened);
    expect(await channelWhen(other, id, (c) => c.charged === PRICE.toString())).toMatchObject({ charged: PRICE.toString() });

    const failing = await api(`/v1/paywalls/${other.paywallId}`, {
      key: other.actor.key,
      method: "PATCH",
      body: { targetRoute: "/status/503" },
    });
    expect(failing.status, failing.text).toBe(200);
    const failed = await buyer.fetch(`${other.x402}?call=2`);
    expect(failed.status).toBe(503);
    const voucher = buyer.sent.at(-1) as string;
    // The failure's ERROR event lands; the channel's charge has not moved.
    await waitFor(async () => {
      const errors = await allOf<Event>(other, `/v1/events?paywallId=${other.paywallId}&eventType=ERROR`);
      return errors.length > 0 ? errors : undefined;
    });
    expect((await channelsOf(other)).find((c) => c.id === id)).toMatchObject({ charged: PRICE.toString() });

    const healed = await api(`/v1/paywalls/${other.paywallId}`, {
      key: other.actor.key,
      method: "PATCH",
      body: { targetRoute: "/echo" },
    });
    expect(healed.status, healed.text).toBe(200);
    const retried = await gatewayFetch(`${other.x402}?call=3`, { headers: { "PAYMENT-SIGNATURE": voucher } });
    expect(retried.status, await retried.clone().text()).toBe(200);
    expect(await channelWhen(other, id, (c) => c.charged === (2n * PRICE).toString())).toMatchObject({
      charged: (2n * PRICE).toString(),
    });
  }, 60_000);

  it("the whole session's transactions on chain: the deposit, the claim and settle, the refund", async () => {
    const txs = await sessionTransactions(channelId, shop.merchant.toLowerCase(), firstBlock);
    // Four for 100 calls: the claim and the settle transfer are two transactions (each for every channel of the run),
    // so a session costs the deposit, one claim and one settle per run, and the refund.
    expect(txs).toEqual(["Deposited", "Claimed", "Settled", "Refunded"]);
  });
});
