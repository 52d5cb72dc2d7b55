// The gateway's own records: a payment's start (PENDING + REQUEST) and outcome (FAILED/COMPLETED + its event) are
// each one atomic write, and no transaction stays PENDING when a write fails on the way. Faults are injected with
// SQL triggers on this test's paywall only.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { balanceOf, gatewayFetch, history, openShop, signedPayment, upstreamRequests } from "./support.ts";

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
    await expectCleanError(await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }));
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
    await expectCleanError(await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }));
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "FAILED", failureReason: "the request failed inside the gateway" }]);
    const { events } = await history(shop);
    expect(events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("when even the last resort cannot write, the outcome is still all or nothing: PENDING, no ERROR event", async () => {
    const shop = await openShop({ price: "1700", route: "/status/503" });
    await faultOnEvent(shop.paywallId, "NEW.event_type = 'ERROR'");
    const { header } = await signedPayment(shop.x402);
    await expectCleanError(await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }));
    expect(await rowsOf(shop.paywallId)).toEqual([{ status: "PENDING", failureReason: null }]);
    expect((await history(shop)).events.map((e) => e.eventType)).toEqual(["REQUEST"]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});
