// Idempotency-Key values, fuzzed against an independent oracle: a key of 1-255 printable ASCII characters (as the
// HTTP layer delivers it: surrounding spaces and tabs trimmed) is used — processed once, then replayed — and any
// other value is 400 VALIDATION_ERROR naming the header, with nothing written; never anything else. Each run's key
// is also sent by a second tenant, which must get its own answer.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { actor, expectInvalid, proxyPaywallBody } from "../support/resources.ts";

/** The oracle, written apart from the app's rule: the printable ASCII range, 1 to 255 of them. */
const acceptable = (delivered: string) =>
  delivered.length >= 1 && delivered.length <= 255 && [...delivered].every((ch) => ch >= " " && ch <= "~");

const count = async (tenantId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM paywalls WHERE tenant_id = ?").bind(tenantId).first<{ n: number }>())?.n;

let run = 0;

describe("Idempotency-Key values, fuzzed", () => {
  it("any value is either a usable key (processed once, then replayed, per tenant) or 400 naming the header", async () => {
    const a = await actor();
    const b = await actor();
    const unit = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(..."abcXYZ019-_.:/{}#@ ~!\"'") },
      { weight: 1, arbitrary: fc.constantFrom("\t", "\u007f", "\u0001", "\u00e9", "\u00a0") },
    );
    const value = fc.oneof(
      fc.string({ unit, maxLength: 20 }),
      fc.integer({ min: 250, max: 260 }).map((n) => "k".repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(value, async (raw) => {
        // Distinct per run (a counter in front), so runs do not replay each other; long values keep their length.
        const key = raw.length > 200 ? `${run++}${raw}`.slice(0, raw.length) : `${run++}${raw}`;
        const delivered = key.replace(/^[ \t]+|[ \t]+$/g, "");
        const body = proxyPaywallBody();
        const send = (who: typeof a) =>
          api("/v1/paywalls", { key: who.key, method: "POST", body, headers: { "idempotency-key": key } });
        const before = await count(a.tenant.id);
        const first = await send(a);
        if (!acceptable(delivered)) {
          expectInvalid(first, "idempotency-key");
          expect(await count(a.tenant.id)).toBe(before);
          return;
        }
        expect(first.status, `${JSON.stringify(key)}: ${first.text}`).toBe(201);
        const again = await send(a);
        expect(again.text).toBe(first.text);
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(await count(a.tenant.id)).toBe((before ?? 0) + 1);
        const other = await send(b);
        expect(other.status, other.text).toBe(201);
        expect(other.headers.get("idempotent-replayed")).toBeNull();
        expect(other.body.data.userId).toBe(b.tenant.id);
      }),
      { numRuns: 30 },
    );
  }, 60_000);
});
