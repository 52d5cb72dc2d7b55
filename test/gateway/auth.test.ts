// Each of the nine auth methods, end to end: what the upstream stub received, and that no credential reaches the buyer.
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/cli/localnet/upstream.ts";
import { buyer, openShop, upstreamRequests } from "./support.ts";

const secret = (name: string) => `${name}-${crypto.randomUUID()}`;

interface Case {
  config: Record<string, string>;
  check: (got: RecordedRequest, config: Record<string, string>) => void;
}

const CASES: Record<string, Case> = {
  none: { config: {}, check: (got) => expect(got.headers.authorization).toBeUndefined() },
  bearer: {
    config: { bearerToken: secret("bearer") },
    check: (got, c) => expect(got.headers.authorization).toBe(`Bearer ${c.bearerToken}`),
  },
  token: { config: { token: secret("token") }, check: (got, c) => expect(got.headers.authorization).toBe(`Token ${c.token}`) },
  "x-api-key": { config: { apiKey: secret("apikey") }, check: (got, c) => expect(got.headers["x-api-key"]).toBe(c.apiKey) },
  "custom-header": {
    config: { headerName: "X-Conflict", headerValue: secret("custom") },
    check: (got, c) => expect(got.headers["x-conflict"]).toBe(c.headerValue),
  },
  "query-param": {
    config: { paramName: "key", paramValue: secret("query") },
    check: (got, c) => expect(new URLSearchParams(got.query).getAll("key")).toEqual([c.paramValue]),
  },
  "bearer-customer": {
    config: {},
    check: (got) => expect(got.headers.authorization).toBe("Bearer buyer-own-token"),
  },
  "x-api-key-secret": {
    config: { apiKey: secret("pair-key"), apiSecret: secret("pair-secret") },
    check: (got, c) => {
      expect(got.headers["x-api-key"]).toBe(c.apiKey);
      expect(got.headers["x-api-secret"]).toBe(c.apiSecret);
    },
  },
  "json-body-field": {
    config: { fieldName: "api_key", fieldValue: secret("body") },
    check: (got, c) => expect(JSON.parse(got.body)).toEqual({ question: "rain?", api_key: c.fieldValue }),
  },
};

describe("the service's credentials reach the upstream, never the buyer", () => {
  for (const [authMethod, { config, check }] of Object.entries(CASES)) {
    it(authMethod, async () => {
      const paywallSecret = secret("paywall-header");
      const shop = await openShop({
        authMethod,
        authConfig: config,
        route: "/text/done",
        price: "100",
        allowedHeaders: ["X-Buyer", "x-conflict"],
        paywall: {
          headers: [
            { key: "X-Paywall", value: paywallSecret },
            { key: "X-Conflict", value: "from-paywall" },
          ],
          queryParams: [{ key: "units", value: "metric" }],
        },
      });
      const res = await buyer().fetch(`${shop.x402}?units=imperial&city=Oslo`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer buyer-own-token",
          "x-api-key": "buyer-key",
          cookie: "session=buyer",
          "x-conflict": "from-buyer",
          "x-buyer": "kept",
          "x-not-allowed": "dropped",
        },
        body: JSON.stringify({ question: "rain?" }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).toBe("done");

      const [got] = await upstreamRequests(shop.prefix);
      expect(got).toBeDefined();
      check(got!, config);
      // Layering: buyer < paywall headers and queryParams < service credentials; payment and buyer auth stripped.
      // Buyer headers: the allowed ones and Content-Type only; Cookie never (neither it nor Authorization can be
      // listed; bearer-customer forwards the buyer's bearer on its own).
      expect(got!.headers["x-buyer"]).toBe("kept");
      expect(got!.headers["x-not-allowed"]).toBeUndefined();
      expect(got!.headers["content-type"]).toBe("application/json");
      expect(got!.headers["x-paywall"]).toBe(paywallSecret);
      if (authMethod !== "custom-header") expect(got!.headers["x-conflict"]).toBe("from-paywall");
      expect(new URLSearchParams(got!.query).get("units")).toBe("metric");
      expect(new URLSearchParams(got!.query).get("city")).toBe("Oslo");
      expect(got!.headers["payment-signature"]).toBeUndefined();
      expect(got!.headers.cookie).toBeUndefined();
      if (authMethod !== "x-api-key" && authMethod !== "x-api-key-secret") expect(got!.headers["x-api-key"]).toBeUndefined();
      if (!["bearer", "token", "bearer-customer"].includes(authMethod)) expect(got!.headers.authorization).toBeUndefined();

      const seenByBuyer = `${text}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}`;
      for (const value of [...Object.values(config), paywallSecret]) {
        if (authMethod === "custom-header" && value === "X-Conflict") continue;
        if (["paramName", "fieldName"].some((n) => config[n] === value)) continue;
        expect(seenByBuyer).not.toContain(value);
      }
    });
  }
});
