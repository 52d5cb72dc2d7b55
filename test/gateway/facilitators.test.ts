// Several facilitators per mode: the gateway verifies and settles at a healthy one, moves on from one that is down,
// broken or slow, and never settles a payment at a second facilitator unless the chain shows the first sent nothing.
// Two real facilitators over the local chain (src/cli/localnet/stack.ts); faults are the outbound router's
// (src/cli/localnet/outbound.ts, tagged per test so each test's facilitators have a health of their own) or the local
// facilitator's own (`/__fault/settle-refused`).
import { describe, expect, it } from "vitest";
import { facilitatorsReport } from "../../src/admin/commands.ts";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { send } from "../support/client.ts";
import { balanceOf, type FacilitatorLogEntry, history, openShop, signedPayment, waitFor } from "./support.ts";

const A = "facilitator.gateway.test";
const B = "facilitator-b.gateway.test";
const VERIFY_TIMEOUT_MS = 1_500;
// Each test pays on the local chain, some past a timeout: more than vitest's default 5 s on a busy machine.
/** How long `slow.<host>` holds a request (src/cli/localnet/outbound.ts, `SLOW_MS`: that module runs in Node only). */
const SLOW_MS = 4_000;

const envWith = (urls: string[]) =>
  ({ FACILITATOR_URLS_TESTNET: urls.join(","), FACILITATOR_VERIFY_TIMEOUT_MS: String(VERIFY_TIMEOUT_MS) }) as Partial<Env>;

const pay = (url: string, header: string, env: Partial<Env>) =>
  send(new Request(url, { headers: { "PAYMENT-SIGNATURE": header } }), env);

/** A facilitator process's verify and settle calls for one payment. */
async function callsAt(host: string, nonce: string) {
  const log = (await (await fetch(`https://${host}/__facilitator/log`)).json()) as FacilitatorLogEntry[];
  const mine = log.filter((e) => e.nonce?.toLowerCase() === nonce.toLowerCase());
  return { verify: mine.filter((e) => e.endpoint === "verify"), settle: mine.filter((e) => e.endpoint === "settle") };
}

interface HealthEntry {
  mode: string;
  url: string;
  status: string;
  calls: number;
  failures: number;
  latencyMs: number | null;
  lastFailure: { at: string; failure: string } | null;
}
/** `GET /v1/health`, from an address of its own per call (polling it must not use up the shared per-address limit). */
const healthOf = async (env: Partial<Env>) => {
  const ip = `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;
  const res = await send(new Request("https://api.test/v1/health", { headers: { "cf-connecting-ip": ip } }), env);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { checks: { facilitators: HealthEntry[] } } }).data.checks.facilitators;
};

/** A payment that must be charged once, settled at B: the buyer's answer, the ledger, the chain, B's log. */
async function expectSettledAtB(res: Response, shop: Awaited<ReturnType<typeof openShop>>, nonce: string, price: bigint) {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const atB = await callsAt(B, nonce);
  expect(atB.settle.map((e) => e.ok)).toEqual([true]);
  expect(paymentResponseOf(res)).toMatchObject({ success: true, transaction: atB.settle[0]?.transaction });
  expect(await balanceOf(shop.merchant)).toBe(price);
  const { transactions } = await history(shop);
  expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: atB.settle[0]?.transaction })]);
}

describe("failover between facilitators", { timeout: 30_000 }, () => {
  it("the first facilitator is down: verified and settled by the second, charged once; the health shows it", async () => {
    const env = envWith([`https://t1-down.${A}`, `https://t1-ok.${B}`]);
    const shop = await openShop({ price: "8100" });
    const { header, nonce } = await signedPayment(shop.x402);
    await expectSettledAtB(await pay(shop.x402, header, env), shop, nonce, 8100n);
    expect(await callsAt(A, nonce)).toEqual({ verify: [], settle: [] });

    // The outcomes reached the mode's shared health: GET /v1/health and the operator command show them.
    const health = await waitFor(async () => {
      const entries = await healthOf(env);
      return entries.find((e) => e.url === `https://t1-ok.${B}`)?.calls === 2 ? entries : undefined;
    });
    expect(health.filter((e) => e.mode === "testnet")).toEqual([
      expect.objectContaining({
        url: `https://t1-down.${A}`,
        status: "failing",
        calls: 1,
        failures: 1,
        lastFailure: { at: expect.any(String), failure: "unreachable" },
      }),
      expect.objectContaining({ url: `https://t1-ok.${B}`, status: "ok", calls: 2, failures: 0, latencyMs: expect.any(Number) }),
    ]);
    const report = await facilitatorsReport((input) => send(new Request(input), env), "https://api.test");
    expect(report).toEqual(health);
  });

  it("the first answers garbage (not JSON, then the wrong shape): the third settles it, no 5xx to the buyer", async () => {
    const env = envWith([`https://t2-garbage.${A}`, `https://t2-wrong-shape.${A}`, `https://t2-ok.${B}`]);
    const shop = await openShop({ price: "8200" });
    const { header, nonce } = await signedPayment(shop.x402);
    await expectSettledAtB(await pay(shop.x402, header, env), shop, nonce, 8200n);
    const health = await waitFor(async () => {
      const entries = await healthOf(env);
      return entries.filter((e) => e.status === "failing").length === 2 ? entries : undefined;
    });
    expect(health.map((e) => e.lastFailure?.failure ?? null).slice(0, 3)).toEqual(["invalid_answer", "invalid_answer", null]);
  });

  it("the first is slow: the call moves on within the verify timeout, and the slow one is asked last next time", async () => {
    const env = envWith([`https://t3-slow.${A}`, `https://t3-ok.${B}`]);
    const shop = await openShop({ price: "8300" });
    const first = await signedPayment(shop.x402);
    let started = Date.now();
    const res = await pay(shop.x402, first.header, env);
    const firstMs = Date.now() - started;
    await expectSettledAtB(res, shop, first.nonce, 8300n);
    expect(firstMs).toBeGreaterThanOrEqual(VERIFY_TIMEOUT_MS);
    expect(firstMs).toBeLessThan(SLOW_MS);

    const second = await signedPayment(shop.x402);
    started = Date.now();
    const again = await pay(shop.x402, second.header, env);
    const secondMs = Date.now() - started;
    expect(again.status, await again.text()).toBe(200);
    expect((await callsAt(B, second.nonce)).settle.map((e) => e.ok)).toEqual([true]);
    // Had the slow one been asked first again, the payment would have waited out its timeout.
    expect(secondMs).toBeLessThan(VERIFY_TIMEOUT_MS);
    expect(await balanceOf(shop.merchant)).toBe(16600n);
    const health = await waitFor(async () => {
      const entries = await healthOf(env);
      return entries.find((e) => e.url === `https://t3-slow.${A}`)?.lastFailure ? entries : undefined;
    });
    expect(health.find((e) => e.url === `https://t3-slow.${A}`)?.lastFailure?.failure).toBe("timeout");
  });
});

describe("settling at one facilitator only, unless the chain shows nothing was sent", { timeout: 30_000 }, () => {
  it("the settle's answer is lost at the first (the transfer was sent): resolved from the chain, never sent to the second", async () => {
    const env = envWith([`https://t4-answer-lost.${A}`, `https://t4-ok.${B}`]);
    const shop = await openShop({ price: "8400" });
    const { header, nonce } = await signedPayment(shop.x402);
    const res = await pay(shop.x402, header, env);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const atA = await callsAt(A, nonce);
    expect(atA.settle.map((e) => e.ok)).toEqual([true]);
    expect(await callsAt(B, nonce)).toEqual({ verify: [], settle: [] });
    expect(paymentResponseOf(res)).toMatchObject({ success: true, transaction: atA.settle[0]?.transaction });
    expect(await balanceOf(shop.merchant)).toBe(8400n);
    const { transactions } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: atA.settle[0]?.transaction })]);
  });

  it("the first refuses the settlement and the chain shows the authorization unused: the second settles it, once", async () => {
    const env = envWith([`https://${A}/__fault/settle-refused`, `https://t5-ok.${B}`]);
    const shop = await openShop({ price: "8500" });
    const { header, nonce } = await signedPayment(shop.x402);
    const res = await pay(shop.x402, header, env);
    const atA = await callsAt(A, nonce);
    expect(atA.verify.map((e) => e.ok)).toEqual([true]);
    expect(atA.settle.map((e) => e.reason)).toEqual(["insufficient_funds_for_gas"]);
    expect((await callsAt(B, nonce)).verify).toEqual([]);
    await expectSettledAtB(res, shop, nonce, 8500n);
  });
});

describe("the single-URL setting", { timeout: 30_000 }, () => {
  it("FACILITATOR_URL_TESTNET alone still verifies and settles there", async () => {
    const env = { FACILITATOR_URL_TESTNET: `https://t6-ok.${B}` } as Partial<Env>;
    const shop = await openShop({ price: "8600" });
    const { header, nonce } = await signedPayment(shop.x402);
    await expectSettledAtB(await pay(shop.x402, header, env), shop, nonce, 8600n);
    const health = await waitFor(async () => {
      const entries = await healthOf(env);
      return entries.find((e) => e.url === `https://t6-ok.${B}`)?.calls === 2 ? entries : undefined;
    });
    expect(health.filter((e) => e.mode === "testnet").map((e) => [e.url, e.status])).toEqual([[`https://t6-ok.${B}`, "ok"]]);
  });
});
