// The paid path writes nothing to D1 (payments recorded in their objects, the default): every D1 statement a paid
// request issues, its `waitUntil` work included, is seen by a recording D1 binding, and none writes. Its records
// reach D1 afterwards, through the payment-records queue.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { send } from "../support/client.ts";
import { GATEWAY_ENV, history, openShop, signedPayment } from "./support.ts";

/** `DB` with every statement's text kept (prepared, batched, in a session: all go through `prepare`). */
function recordingD1(d1: D1Database, seen: string[]): D1Database {
  const preparer = <T extends { prepare(q: string): D1PreparedStatement }>(inner: T) =>
    new Proxy(inner, {
      get(target, prop) {
        if (prop === "prepare") {
          return (query: string) => {
            seen.push(query);
            return target.prepare(query);
          };
        }
        if (prop === "withSession") {
          return (constraint?: D1SessionConstraint) => preparer((target as unknown as D1Database).withSession(constraint));
        }
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return preparer(d1);
}

const WRITES = /^\s*(insert|update|delete|replace|create|drop|alter)\b/i;

it("a paid x402 request makes no D1 write on its path; its records land in D1 after", { timeout: 30_000 }, async () => {
  expect(env.PAYMENT_RECORDS).toBe("objects");
  const shop = await openShop({ price: "1500" });
  const { header } = await signedPayment(shop.x402);
  const seen: string[] = [];
  const res = await send(new Request(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } }), {
    ...GATEWAY_ENV,
    DB: recordingD1(env.DB, seen),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(seen.length, "the paywall's state is read through the recording binding").toBeGreaterThan(0);
  expect(seen.filter((q) => WRITES.test(q))).toEqual([]);

  const { transactions, events } = await history(shop);
  expect(transactions.map((t) => [t.status, t.amount])).toEqual([["COMPLETED", "1500"]]);
  expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
});
