// The gateway's own records: a payment's start (PENDING + REQUEST) and outcome (FAILED/COMPLETED + its event) are
// each one atomic write, and no transaction stays PENDING when a write fails on the way. Over D1
// (`PAYMENT_RECORDS=d1`) faults are injected with SQL triggers on this test's paywall only; over the payments' objects
// (`objects`) into the calls to the objects (`faultyObjects`), and into D1 as the objects' read model. Either way a
// failed record write never charges without a record, never loses the payment, never shows it twice.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { SWEEP_AFTER_EXPIRY_MS } from "../../src/core/ledger/payment-object.ts";
import { send } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { faultyObjects, type ObjectCall } from "../support/fake-bindings.ts";
import {
  balanceOf,
  GATEWAY_ENV,
  history,
  openShop,
  recordsLanded,
  type Shop,
  signedPayment,
  upstreamRequests,
} from "./support.ts";

/** The shop's x402 URL paid with `header`, the gateway recording over `records` (`vars` replacing more). */
const payAt = (shop: Shop, header: string, records: "d1" | "objects", vars: Partial<Env> = {}) =>
  send(new Request(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }), {
    ...GATEWAY_ENV,
    PAYMENT_RECORDS: records,
    ...vars,
  } as Partial<Env>);

/** The payment objects with the moves `lost` says failing (`before`: never reached; `after`: ran, answer lost). */
const losing = (lost: (move: string, call: ObjectCall) => "before" | "after" | undefined) =>
  faultyObjects(env.PAYMENT_COORDINATOR, (call) => (call.method === "move" ? lost(String(call.args[0]), call) : undefined))
    .namespace;

/** Only the first `n` calls `matches` says fail, `when`. */
const firstOf = (n: number, matches: (move: string) => boolean, when: "before" | "after") => {
  let left = n;
  return (move: string) => (matches(move) && left-- > 0 ? when : undefined);
};

const triggers: string[] = [];
afterEach(async () => {
  for (const name of triggers.splice(0)) await env.DB.prepare(`DROP TRIGGER IF EXISTS ${name}`).run();
});

/** Aborts every insert into `events` of this paywall that matches `when` (SQL over NEW). */
async function faultOnEvent(paywallId: string, when: string) {
  const name = `fault_${paywallId.replace(/[^A-Za-z0-9_]/g, "_")}_${triggers.length}`;
  triggers.push(name);
  await env.DB.prepare(
    `CREATE TRIGGER ${name} BEFORE INSERT ON events WHEN NEW.paywall_id = '${paywallId}' AND ${when}
     BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  ).run();
}

const rowsOf = async (paywallId: string) =>
  (
    await env.DB.prepare("SELECT status, failure_reason AS failureReason FROM transactions WHERE paywall_id = ?")
      .bind(paywallId)
      .all<{ status: string; failureReason: string | null }>()
  ).results;

/** A clean error envelope: a code and a request id, no stack, no SQL, no trigger text. */
async function expectCleanError(res: Response) {
  expect(res.status).toBeGreaterThanOrEqual(500);
  const text = await res.text();
  expect(JSON.parse(text)).toMatchObject({ code: expect.any(String), meta: { requestId: expect.stringMatching(/^req_/) } });
  expect(text).not.toMatch(/injected|RAISE|SQLITE|stack|at \w+ \(/i);
}

describe("a payment's start is one atomic write", () => {
  it("a fault on the REQUEST event leaves no PENDING transaction either; nothing forwarded, nothing charged", async () => {
    const shop = await openShop({ price: "1500" });
    await faultOnEvent(shop.paywallId, "NEW.event_type = 'REQUEST'");
    const { header } = await signedPayment(shop.x402);
    await expectCleanError(await payAt(shop, header, "d1"));
    expect(await rowsOf(shop.paywallId)).toEqual([]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});

describe("no transaction is left PENDING", () => {
  it("a failed outcome write is atomic (no FAILED without its ERROR event), and the transaction still ends FAILED", async () => {
    const shop = await openShop({ price: "1600", route: "/status/503" });
    // The first outcome write (reason "upstream answered 503") fails as a whole; the gateway's last resort does not.
    await faultOnEvent(shop.paywallId, "NEW.event_type = 'ERROR' AND NEW.metadata LIKE '%upstream answered%'");
    const { header } = await signedPayment(shop.x402);
    await expectCleanError(await payAt(shop, header, "d1"));
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "FAILED", failureReason: "the request failed inside the gateway" }]);
    const { events } = await history(shop);
    expect(events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("when even the last resort cannot write, the outcome is still all or nothing: PENDING, no ERROR event", async () => {
    const shop = await openShop({ price: "1700", route: "/status/503" });
    await faultOnEvent(shop.paywallId, "NEW.event_type = 'ERROR'");
    const { header } = await signedPayment(shop.x402);
    await expectCleanError(await payAt(shop, header, "d1"));
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "PENDING", failureReason: null }]);
    expect((await history(shop)).events.map((e) => e.eventType)).toEqual(["REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});

describe("over the payments' objects (PAYMENT_RECORDS=objects)", () => {
  it("a start the object never records: a clean error; no transaction; nothing forwarded, nothing charged", async () => {
    const shop = await openShop({ price: "1510" });
    const { header } = await signedPayment(shop.x402);
    const objects = losing((move) => (move === "start" ? "before" : undefined));
    await expectCleanError(await payAt(shop, header, "objects", { PAYMENT_COORDINATOR: objects }));
    await recordsLanded("objects");
    expect(await rowsOf(shop.paywallId)).toEqual([]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("a failed outcome the object never records: the last resort records FAILED with its ERROR event; nothing charged", async () => {
    const shop = await openShop({ price: "1610", route: "/status/503" });
    const { header } = await signedPayment(shop.x402);
    const objects = losing(firstOf(1, (move) => move === "fail", "before"));
    await expectCleanError(await payAt(shop, header, "objects", { PAYMENT_COORDINATOR: objects }));
    await recordsLanded("objects");
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "FAILED", failureReason: "the request failed inside the gateway" }]);
    expect((await history(shop)).events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("when even the last resort is never recorded: PENDING with no ERROR event, then FAILED by its object's sweep once expired", async () => {
    const shop = await openShop({ price: "1710", route: "/status/503" });
    const { header, payload } = await signedPayment(shop.x402);
    const objects = losing((move) => (move === "fail" ? "before" : undefined));
    await expectCleanError(await payAt(shop, header, "objects", { PAYMENT_COORDINATOR: objects }));
    await recordsLanded("objects");
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "PENDING", failureReason: null }]);
    const { transactions, events } = await history(shop);
    expect(events.map((e) => e.eventType)).toEqual(["REQUEST"]);

    // Never lost: past its authorization's expiry its own object asks the chain, and records it FAILED.
    const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore);
    useTestClock(validBefore * 1000 + SWEEP_AFTER_EXPIRY_MS + 1_000);
    expect(await runDurableObjectAlarm(env.PAYMENT_COORDINATOR.getByName(transactions[0]!.id))).toBe(true);
    await recordsLanded("objects");
    expect(await rowsOf(shop.paywallId)).toEqual([
      { status: "FAILED", failureReason: "the payment's authorization expired unused" },
    ]);
    expect((await history(shop)).events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it.for([
    ["before", "the request's retry records it, with the answer kept before settling"],
    ["after", "recorded with its answer, the request never hears"],
  ] as const)(
    "a settled payment's COMPLETED lost %s reaching its object (%s): the resend gets the answer, charged and shown once",
    async ([when]) => {
      const shop = await openShop({ price: when === "before" ? "1810" : "1820" });
      const { header } = await signedPayment(shop.x402);
      const objects = losing(firstOf(1, (move) => move === "complete", when));
      await expectCleanError(await payAt(shop, header, "objects", { PAYMENT_COORDINATOR: objects }));
      const resend = await payAt(shop, header, "objects");
      const text = await resend.text();
      expect(resend.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ path: expect.stringContaining(shop.prefix) });
      await recordsLanded("objects");
      const { transactions, events } = await history(shop);
      expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED" })]);
      expect(resend.headers.get("payment-reference")).toBe(transactions[0]?.txHash);
      expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await balanceOf(shop.merchant)).toBe(when === "before" ? 1810n : 1820n);
    },
  );

  it("D1 refusing the records (a fault on their events): the buyer is answered and charged once; they land once D1 takes them", async () => {
    const shop = await openShop({ price: "1910" });
    await faultOnEvent(shop.paywallId, "NEW.event_type = 'REQUEST'");
    const { header } = await signedPayment(shop.x402);
    const res = await payAt(shop, header, "objects");
    expect(res.status, await res.text()).toBe(200);
    expect(await balanceOf(shop.merchant)).toBe(1910n);
    await recordsLanded("objects");
    expect(await rowsOf(shop.paywallId)).toEqual([]);

    for (const name of triggers.splice(0)) await env.DB.prepare(`DROP TRIGGER IF EXISTS ${name}`).run();
    await recordsLanded("objects");
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([
      expect.objectContaining({ status: "COMPLETED", txHash: res.headers.get("payment-reference") }),
    ]);
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(await balanceOf(shop.merchant)).toBe(1910n);
  });
});
