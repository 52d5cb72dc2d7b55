// The Cron sweep's queue: payments that stay unknown go to the back (checked_at, attempts) so newer ones are reached,
// a deleted paywall's payment is still settled, and a network whose RPC fails is not asked again in the same run.
// Real parts: MPP payments left PENDING by the outbound router's `send-dropped.` fault (the transaction is not sent),
// then sent by the buyer on the local Tempo chain; other PENDING payments are rows no chain knows of.
import { createScheduledController, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Credential } from "mppx";
import { createClient, http, keccak256, toHex } from "viem";
import { sendRawTransactionSync } from "viem/actions";
import { tempoModerato } from "viem/chains";
import { afterEach, describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import {
  PAYMENT_SWEEP_CRON,
  SWEEP_BATCH,
  SWEEP_MIN_AGE_MS,
  SWEEP_RPC_FAILURES,
  sweepPendingPayments,
} from "../../src/gateway/sweep.ts";
import worker from "../../src/index.ts";
import { api, send } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { faultyObjects } from "../support/fake-bindings.ts";
import { insertHistoricTransactions } from "../support/ledger-fixture.ts";
import {
  balanceOf,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  net,
  openShop,
  recordsLanded,
  settlementsOf,
  signedPayment,
  upstreamRequests,
} from "./support.ts";
import { mppShop } from "./tempo-support.ts";

const RPC = "https://tempo-rpc.gateway.test";
const tempo = net.tempo!;
const chain = { ...tempoModerato, id: tempo.chainId, rpcUrls: { default: { http: [RPC] } } };
const client = createClient({ chain, transport: http(RPC, { retryCount: 0 }) });
// Buyers the MPP outcome tests do not use (they run in their own file; accounts are shared by the chain).
let nextBuyer = tempo.buyers.length - 1;

/**
 * An MPP payment left PENDING (its transaction not sent), then sent by the buyer: on chain, not yet recorded. Recorded
 * in D1 unless `overrides` say otherwise: the Cron sweep's rows (over objects, those of payments recorded before).
 */
async function pendingButPaid(shop: Awaited<ReturnType<typeof mppShop>>, overrides: Partial<Env> = {}) {
  const account = tempo.buyers[nextBuyer--]!;
  const buyer = createMppBuyer({ privateKey: account.privateKey, rpcUrl: RPC, chainId: tempo.chainId, fetch: gatewayFetch });
  const credential = await buyer.mppx.createCredential(await gatewayFetch(shop.mpp));
  const networkOverrides = {
    ...JSON.parse(net.networkOverrides),
    "tempo-testnet": { rpcUrl: `https://send-dropped.tempo-rpc.gateway.test` },
  };
  const res = await send(new Request(shop.mpp, { headers: { Authorization: credential } }), {
    ...GATEWAY_ENV,
    PAYMENT_RECORDS: "d1",
    NETWORK_OVERRIDES: JSON.stringify(networkOverrides),
    ...overrides,
  } as Partial<Env>);
  expect(res.status).toBe(502);
  const { details } = (await res.json()) as { details: { transactionId: string; txHash: string } };
  const signed = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
  const receipt = await sendRawTransactionSync(client, { serializedTransaction: signed });
  expect(receipt.transactionHash).toBe(details.txHash);
  return details;
}

/** PENDING payments of the shop no chain knows of, started long ago (before any real one), on `network`. */
async function unknownPayments(shop: Awaited<ReturnType<typeof mppShop>>, count: number, network = "tempo-testnet") {
  const ids = Array.from({ length: count }, (_, i) => `txn_filler_${i.toString().padStart(4, "0")}`);
  const startedAt = Date.UTC(2020, 0, 1);
  const validBefore = Date.now() + 3_600_000;
  await insertHistoricTransactions(
    ids.map((id, i) => ({
      id,
      tenantId: shop.actor.tenant.id,
      paywallId: shop.paywallId,
      serviceId: shop.serviceId,
      protocol: "mpp" as const,
      network,
      amount: "9100",
      currency: "USDC" as const,
      status: "PENDING" as const,
      payerAddress: shop.recipient,
      createdAt: new Date(startedAt + i),
    })),
  );
  await env.DB.batch(
    ids.map((id, i) =>
      env.DB.prepare(
        "INSERT INTO pending_payments (transaction_id, tenant_id, reference, valid_before, asset, pay_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(id, shop.actor.tenant.id, keccak256(toHex(id)), validBefore, tempo.currency, shop.recipient, startedAt + i),
    ),
  );
  return ids;
}

const attemptsOf = async (ids: string[]) =>
  Promise.all(
    ids.map(
      async (id) =>
        (
          await env.DB.prepare("SELECT attempts FROM pending_payments WHERE transaction_id = ?")
            .bind(id)
            .first<{ attempts: number }>()
        )?.attempts,
    ),
  );

const sweep = (at: number, overrides: Partial<Env> = {}) =>
  worker.scheduled(createScheduledController({ scheduledTime: at, cron: PAYMENT_SWEEP_CRON }), { ...env, ...overrides } as Env);

const transaction = async (shop: { actor: { key: string } }, id: string) => {
  const res = await api(`/v1/transactions/${id}`, { key: shop.actor.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { status: string; txHash: string | null };
};

afterEach(async () => {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM pending_payments WHERE transaction_id LIKE 'txn_filler_%'"),
    env.DB.prepare("DELETE FROM transactions WHERE id LIKE 'txn_filler_%'"),
  ]);
});

describe("the sweep's queue", () => {
  it("a full batch of payments that stay unknown does not starve a newer one: the next run reaches and settles it", async () => {
    const shop = await mppShop({ price: "9100" });
    const paid = await pendingButPaid(shop);
    const fillers = await unknownPayments(shop, SWEEP_BATCH);
    const later = Date.now() + SWEEP_MIN_AGE_MS + 1_000;
    await sweep(later);
    // The first run took the oldest: the unknown ones, each now checked once; the paid one not yet.
    expect(new Set(await attemptsOf(fillers))).toEqual(new Set([1]));
    expect(await transaction(shop, paid.transactionId)).toMatchObject({ status: "PENDING" });
    await sweep(later + 300_000);
    expect(await transaction(shop, paid.transactionId)).toMatchObject({ status: "COMPLETED", txHash: paid.txHash });
  }, 60_000);

  it("a payment whose paywall was deleted is settled all the same, with its event", async () => {
    const shop = await mppShop({ price: "9100" });
    const paid = await pendingButPaid(shop);
    const deleted = await api(`/v1/paywalls/${shop.paywallId}`, { key: shop.actor.key, method: "DELETE" });
    expect(deleted.status, deleted.text).toBe(200);
    await sweep(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    expect(await transaction(shop, paid.transactionId)).toMatchObject({ status: "COMPLETED", txHash: paid.txHash });
    const events = await api(`/v1/events?paywallId=${shop.paywallId}`, { key: shop.actor.key });
    expect((events.body.data as { eventType: string }[]).map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
  }, 60_000);

  it(`a network whose RPC failed ${SWEEP_RPC_FAILURES} times is not asked again in that run: its other payments wait`, async () => {
    const shop = await mppShop({ price: "9100" });
    const fillers = await unknownPayments(shop, SWEEP_RPC_FAILURES + 2);
    // The Tempo RPC answers with a proxy's error page: "the chain could not be reached".
    const overrides = { ...JSON.parse(net.networkOverrides), "tempo-testnet": { rpcUrl: "https://unrouted.gateway.test" } };
    await sweep(Date.now() + SWEEP_MIN_AGE_MS + 1_000, { NETWORK_OVERRIDES: JSON.stringify(overrides) } as Partial<Env>);
    expect(await attemptsOf(fillers)).toEqual([...Array(SWEEP_RPC_FAILURES).fill(1), 0, 0]);
  });

  it("past the run's deadline no payment is taken: all wait for the next run, unchecked", async () => {
    const shop = await mppShop({ price: "9100" });
    const fillers = await unknownPayments(shop, 3);
    const result = await sweepPendingPayments(env, new Date(Date.now() + SWEEP_MIN_AGE_MS + 1_000), 0);
    expect(result).toMatchObject({ checked: 0, pending: 0 });
    expect(result.deferred).toBeGreaterThanOrEqual(3);
    expect(await attemptsOf(fillers)).toEqual([0, 0, 0]);
  });
});

describe("a payment recorded in its object (PAYMENT_RECORDS=objects)", () => {
  it("left PENDING, is swept by its own object past its expiry: COMPLETED from the chain, no global scan", async () => {
    const shop = await mppShop({ price: "9100" });
    const paid = await pendingButPaid(shop, { PAYMENT_RECORDS: "objects" } as Partial<Env>);
    const object = env.PAYMENT_COORDINATOR.getByName(paid.transactionId);
    expect(await object.transaction()).toMatchObject({ status: "PENDING" });
    // Nothing of it is in the Cron sweep's table: only its object settles it.
    expect(await attemptsOf([paid.transactionId])).toEqual([undefined]);
    // Its sweep is due past its expiry (minutes away): brought forward, then its alarm runs.
    await runInDurableObject(object, (_, { storage }) => storage.kv.put("sweep", { ...storage.kv.get<object>("sweep"), at: 0 }));
    await runDurableObjectAlarm(object);
    expect(await object.transaction()).toMatchObject({ status: "COMPLETED", txHash: paid.txHash });
    await recordsLanded("objects");
    expect(await transaction(shop, paid.transactionId)).toMatchObject({ status: "COMPLETED", txHash: paid.txHash });
    const events = await api(`/v1/events?paywallId=${shop.paywallId}`, { key: shop.actor.key });
    expect((events.body.data as { eventType: string }[]).map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
  }, 60_000);

  it("its upstream answered, its request died before settling: its object settles it a minute later, charged once; the resend gets the kept answer", async () => {
    const shop = await openShop({ price: "9300" });
    const { header, nonce } = await signedPayment(`${shop.x402}?marker=dies`);
    const pay = (overrides: Partial<Env> = {}) =>
      send(new Request(`${shop.x402}?marker=dies`, { headers: { "PAYMENT-SIGNATURE": header } }), {
        ...GATEWAY_ENV,
        PAYMENT_RECORDS: "objects",
        ...overrides,
      } as Partial<Env>);
    // The Worker dies once the upstream's answer is kept: nothing it calls afterwards reaches anything.
    let dead = false;
    const dying = faultyObjects(env.PAYMENT_COORDINATOR, ({ method }) => {
      if (dead) return "before";
      if (method !== "keepAnswer") return undefined;
      dead = true;
      return "after";
    });
    expect((await pay({ PAYMENT_COORDINATOR: dying.namespace })).status).not.toBe(200);
    await recordsLanded("objects");
    const [started] = (await history(shop)).transactions;
    expect(started).toMatchObject({ status: "PENDING" });
    expect(await settlementsOf(nonce)).toEqual([]);
    expect(await balanceOf(shop.merchant)).toBe(0n);

    // A minute later (as the Cron sweep would take it), its object's alarm settles it while its authorization is valid.
    const object = env.PAYMENT_COORDINATOR.getByName(started!.id);
    useTestClock().advance(SWEEP_MIN_AGE_MS + 1_000);
    expect(await runDurableObjectAlarm(object)).toBe(true);
    const settled = await object.transaction();
    expect(settled).toMatchObject({ status: "COMPLETED", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await settlementsOf(nonce)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(9300n);

    const resend = await pay();
    const text = await resend.text();
    expect(resend.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ query: "marker=dies" });
    expect(resend.headers.get("payment-reference")).toBe(settled?.txHash);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(9300n);
    await recordsLanded("objects");
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: settled?.txHash })]);
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(events.find((e) => e.eventType === "SUCCESS")).toMatchObject({ metadata: { settledBy: "sweep" } });
  }, 60_000);
});
