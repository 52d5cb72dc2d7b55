// Payments recorded in D1 before the gateway switched to recording them in their objects (`PAYMENT_RECORDS` "d1", then
// "objects" with `PAYMENT_RECORDS_SINCE` the switch): presented again after it, each is answered as before (its stored
// answer, or the outcome-unknown 502 while PENDING), never forwarded or charged twice; the Cron sweep still settles
// its PENDING row; a retry under an x402 `payment-identifier` paid before gets its answer; and a payment made after the
// switch reads none of D1's payment tables.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { generatePaymentId } from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { VALIDITY_WINDOW_SECONDS } from "../../src/core/payments.ts";
import { presentedMpp } from "../../src/gateway/mpp/sdk.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/sweep.ts";
import { VALID_BEFORE_SKEW_SECONDS } from "../../src/gateway/x402/sdk.ts";
import worker from "../../src/index.ts";
import { send } from "../support/client.ts";
import { faultyD1 } from "../support/fake-bindings.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  openShop,
  settlementsOf,
  signedPayment,
  signedWithId,
  upstreamRequests,
  verificationsOf,
} from "./support.ts";
import { mppShop, TEMPO_RPC, tempo } from "./tempo-support.ts";

/** The gateway before the switch: every move a D1 batch. */
const BEFORE = { ...GATEWAY_ENV, PAYMENT_RECORDS: "d1" } as Partial<Env>;
/** The gateway switched to its objects at `at`. */
const switchedTo = (at = new Date()) =>
  ({ ...GATEWAY_ENV, PAYMENT_RECORDS: "objects", PAYMENT_RECORDS_SINCE: at.toISOString() }) as Partial<Env>;

/** A paid request whose credential can be sent again, through the gateway as `vars` configure it. */
async function purchase(url: string) {
  const signed = await signedPayment(url);
  const pay = (vars: Partial<Env>) => send(new Request(url, { headers: { "PAYMENT-SIGNATURE": signed.header } }), vars);
  return { ...signed, pay };
}

/** D1's payment tables, in the SQL of `calls`. */
const paymentTables = (calls: { sql: string[] }[]) =>
  calls.flatMap((c) => c.sql).filter((sql) => /paid_answers|pending_payments|"transactions"|\btransactions\b/.test(sql));

describe("an x402 payment recorded in D1 before the switch", () => {
  it("COMPLETED: presented again after it, its stored answer with its receipt; forwarded and charged once", async () => {
    const shop = await openShop({ price: "4100" });
    const { pay } = await purchase(`${shop.x402}?marker=before`);
    const first = await pay(BEFORE);
    const firstText = await first.text();
    expect(first.status, firstText).toBe(200);

    const again = await pay(switchedTo());
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstText);
    expect(again.headers.get("payment-reference")).toBe(first.headers.get("payment-reference"));
    expect(again.headers.get("payment-transaction-id")).toBe(first.headers.get("payment-transaction-id"));
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(4100n);
    expect((await history(shop)).transactions).toEqual([expect.objectContaining({ status: "COMPLETED" })]);
  });

  it("PENDING: the outcome-unknown 502 after the switch; the Cron sweep still settles its row; then its stored answer", async () => {
    const shop = await openShop({ price: "4200" });
    const { pay, payload, required, nonce } = await purchase(`${shop.x402}?marker=pending`);
    // The facilitator never got the settlement (`send-dropped.`): PENDING in D1, the answer kept for the resend.
    const first = await pay({ ...BEFORE, FACILITATOR_URL_TESTNET: FACILITATOR.replace("https://", "https://send-dropped.") });
    expect(first.status).toBe(502);
    const { details } = (await first.json()) as { details: { transactionId: string } };

    const switched = switchedTo();
    const unknown = await pay(switched);
    expect(unknown.status).toBe(502);
    expect(await unknown.json()).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", details });
    expect(await settlementsOf(nonce)).toHaveLength(0);

    // Whoever holds the authorization submits it; the Cron sweep, run by the switched gateway, records it.
    expect((await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(payload, required.accepts[0]!)).success).toBe(true);
    const controller = createScheduledController({
      scheduledTime: Date.now() + SWEEP_MIN_AGE_MS + 1_000,
      cron: PAYMENT_SWEEP_CRON,
    });
    await worker.scheduled(controller, { ...env, ...switched } as Env);
    const [swept] = (await history(shop)).transactions;
    expect(swept).toMatchObject({ id: details.transactionId, status: "COMPLETED" });

    const served = await pay(switched);
    const text = await served.text();
    expect(served.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ query: "marker=pending" });
    expect(served.headers.get("payment-reference")).toBe(swept?.txHash);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(4200n);
  });
});

describe("an x402 payment-identifier paid in D1 before the switch", () => {
  it("retried under it with a new authorization well after the switch: the first answer; the new one never verified or settled", async () => {
    const shop = await openShop({ price: "4400" });
    const id = generatePaymentId();
    const first = await signedWithId(shop.x402, id);
    const pay = (header: string, vars: Partial<Env>) =>
      send(new Request(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }), vars);
    const firstRes = await pay(first.header, BEFORE);
    const firstText = await firstRes.text();
    expect(firstRes.status, firstText).toBe(200);

    // The retry's authorization was signed past the switch: only its retry key can be older.
    const retry = await signedWithId(shop.x402, id);
    const switchedAt = new Date(Date.now() - (VALIDITY_WINDOW_SECONDS + VALID_BEFORE_SKEW_SECONDS + 5) * 1000);
    const again = await pay(retry.header, switchedTo(switchedAt));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstText);
    expect(await verificationsOf(retry.nonce)).toBe(0);
    expect(await settlementsOf(retry.nonce)).toEqual([]);
    expect(await balanceOf(shop.merchant)).toBe(4400n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});

describe("since when a credential can have been accepted (what decides whether D1 is asked)", () => {
  it("an MPP credential: from when its challenge was issued, never later", async () => {
    const shop = await mppShop({ price: "4500" });
    const buyer = createMppBuyer({ privateKey: tempo.buyers[0]!.privateKey, rpcUrl: TEMPO_RPC, chainId: tempo.chainId });
    const issued = Date.now();
    const credential = await buyer.mppx.createCredential(await gatewayFetch(shop.mpp));
    const since = (await presentedMpp(credential))?.since?.getTime();
    expect(since).toBeGreaterThanOrEqual(issued - 1_000);
    expect(since).toBeLessThanOrEqual(Date.now());
  });
});

describe("a payment made after the switch", () => {
  it("reads none of D1's payment tables once its credential cannot predate the switch (past its longest window)", async () => {
    const shop = await openShop({ price: "4300" });
    const { pay } = await purchase(shop.x402);
    const d1 = faultyD1(env.DB);
    // An authorization is accepted up to the validity window plus a minute of skew before its `validBefore`.
    const switchedAt = new Date(Date.now() - (VALIDITY_WINDOW_SECONDS + VALID_BEFORE_SKEW_SECONDS + 5) * 1000);
    const res = await pay({ ...switchedTo(switchedAt), DB: d1.db });
    expect(res.status, await res.text()).toBe(200);
    expect(paymentTables(d1.calls)).toEqual([]);
    expect(await balanceOf(shop.merchant)).toBe(4300n);
  });
});
