// Tenant text in the 402s: a paywall's name and description (free text, multi-line: the dashboard's textarea sends
// CRLF) and its slug reach both standards' challenge headers. Whatever they hold, every challenge is built: a 402
// whose headers are legal header values and decode to the text folded on one line, never a 5xx.
import { decodePaymentRequiredHeader } from "@x402/core/http";
import fc from "fast-check";
import { Challenge } from "mppx";
import { describe, expect, it, vi } from "vitest";
import { challengeDescription } from "../../src/core/payments.ts";
import { headerValueProblem } from "../../src/lib/header-rules.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { api } from "../support/client.ts";
import { insertRows, paywallRow } from "../support/factories.ts";
import { envInt, fcParams } from "../support/fuzz-env.ts";
import { gatewayFetch, openShop } from "./support.ts";
import { setTempoWallet } from "./tempo-support.ts";

vi.setConfig({ testTimeout: 120_000 });

const NETWORKS = ["base-sepolia", "tempo-testnet"];

/** Hostile pieces of text: line breaks, NUL and other controls, quotes, backslashes, non-ASCII, separators. */
const HOSTILE = [
  "\r\n",
  "\n",
  "\r",
  "\u0000",
  "\u0007",
  "\u001b[31m",
  "\u007f",
  "\u0085",
  "\t",
  '"',
  "\\",
  '\\"',
  ', id="forged"',
  'expires="2000-01-01T00:00:00Z"',
  'Payment realm="evil"',
  "é",
  "—",
  "東京",
  "🌦",
  "\u2028",
  "\u202e",
  "\ufeff",
];
const hostileText = (maxParts: number) =>
  fc
    .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: "binary", maxLength: 12 })), {
      minLength: 1,
      maxLength: maxParts,
    })
    .map((parts) => parts.join(""));
/** Slugs are `[a-z0-9._-]` through the API; rows written otherwise may hold anything a URL path segment can carry. */
const hostileSlug = fc
  .array(fc.constantFrom("a", "z", "0", ".", "_", "-", "é", "東", "%", "'", '"', "\\", " ", "<", "~"), {
    minLength: 1,
    maxLength: 20,
  })
  .map((chars) => `s${chars.join("")}`);

/**
 * Every header of a response is a legal header value (what a Node or browser buyer would refuse otherwise), in
 * printable ASCII (how other bytes read is up to each HTTP stack).
 */
const expectLegalHeaders = (res: Response) => {
  for (const [name, value] of res.headers) {
    expect(headerValueProblem(value), `${name}: ${JSON.stringify(value)}`).toBeNull();
    expect(value, name).toMatch(/^[\x20-\x7e]*$/);
  }
};

describe("a paywall's name, description and slug in its 402s", async () => {
  const shop = await openShop({ networks: NETWORKS });
  await setTempoWallet(shop.actor.tenant.id);
  const base = new URL(shop.x402).origin;

  /** A paywall of the shop's service written straight to the database (the API refuses control characters). */
  const paywallWith = async (fields: { name: string; description: string | null; slug: string }) => {
    const id = `pw_${randomHex(12)}`;
    await insertRows("paywalls", [
      paywallRow(shop.actor.tenant, id, {
        serviceId: shop.serviceId,
        targetType: "ROUTE",
        targetUrl: null,
        targetRoute: "/echo",
        networks: NETWORKS,
        ...fields,
      }),
    ]);
    const tail = `${encodeURIComponent(shop.serviceId)}/${encodeURIComponent(fields.slug)}`;
    return { x402: `${base}/api/x402/pay/${tail}`, mpp: `${base}/api/mpp/pay/${tail}` };
  };

  /** Both challenges answer 402 with legal headers that carry the text folded: what a buyer decodes. */
  const expectChallenges = async (urls: { x402: string; mpp: string }, fields: { name: string; description: string | null }) => {
    const said = challengeDescription(fields);
    const x402 = await gatewayFetch(urls.x402);
    expect(x402.status, await x402.clone().text()).toBe(402);
    expectLegalHeaders(x402);
    const required = decodePaymentRequiredHeader(x402.headers.get("PAYMENT-REQUIRED") as string);
    expect(required.resource?.description).toBe(said);
    const mpp = await gatewayFetch(urls.mpp);
    expect(mpp.status, await mpp.clone().text()).toBe(402);
    expectLegalHeaders(mpp);
    const challenge = Challenge.fromResponse(mpp);
    expect(challenge.description ?? "").toBe(said); // mppx leaves an empty description out
    expect(challenge.realm).toBe(new URL(base).host);
    expect(challenge.method).toBe("tempo");
  };

  it("a description written in the dashboard's textarea (CRLF between lines): both 402s carry it on one line", async () => {
    const fields = {
      name: "Forecast",
      description: "Daily forecast.\r\nOne city per call.\r\n\r\nSee the docs.",
      slug: `crlf-${randomHex(4)}`,
    };
    await expectChallenges(await paywallWith(fields), fields);
    expect(challengeDescription(fields)).toBe("Daily forecast. One city per call. See the docs.");
  });

  it("a description of 10,000 non-ASCII characters: both 402s carry its first 300 characters", async () => {
    const fields = { name: "Long", description: "東".repeat(10_000), slug: `long-${randomHex(4)}` };
    await expectChallenges(await paywallWith(fields), fields);
    expect([...challengeDescription(fields)]).toHaveLength(300);
  });

  it("hostile names, descriptions and slugs: every challenge of both standards is a 402 with legal headers", async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileText(8),
        fc.option(hostileText(12), { nil: null }),
        hostileSlug,
        async (name, description, slug) => {
          const fields = { name, description, slug: `${slug}-${randomHex(3)}` };
          await expectChallenges(await paywallWith(fields), fields);
        },
      ),
      fcParams(envInt("FUZZ_RUNS", 30)),
    );
  });
});

describe("the discovery preview", () => {
  it("says which paywalls' 402s carry their description folded or cut", async () => {
    const shop = await openShop({ networks: NETWORKS });
    const patched = await api(`/v1/paywalls/${shop.paywallId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { description: "Line one\r\nline two" },
    });
    expect(patched.status, patched.text).toBe(200);
    const preview = await api(`/v1/services/${shop.serviceId}/discovery`, { key: shop.actor.key });
    expect(preview.status, preview.text).toBe(200);
    const folded = preview.body.data.diagnostics.filter((d: { code: string }) => d.code === "CHALLENGE_DESCRIPTION_FOLDED");
    expect(folded).toEqual([expect.objectContaining({ severity: "info", paywallId: shop.paywallId })]);
    expect(preview.body.data.diagnostics.filter((d: { code: string }) => d.code === "CHALLENGE_NOT_BUILDABLE")).toEqual([]);
  });
});
