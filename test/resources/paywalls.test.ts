import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import {
  type Actor,
  actor,
  CANARY,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  ISO_DATE,
  proxyPaywallBody,
  routePaywallBody,
  type Service,
  storedPaywall,
} from "../support/resources.ts";

const PAY = env.PAYMENT_BASE_URL.replace(/\/+$/, "");
const FACILITATOR = { testnet: env.FACILITATOR_URL_TESTNET, mainnet: env.FACILITATOR_URL_MAINNET };
const ALL_METHODS = ["GET", "POST", "PUT", "PATCH"];

/** Every field of a paywall response with its default, for `who`; `overrides` replace fields. */
function expected(who: Actor, overrides: Record<string, unknown>) {
  return {
    id: expect.stringMatching(/^pw_[0-9a-f]{24}$/),
    slug: expect.any(String),
    name: "Forecast",
    description: null,
    targetType: "PROXY",
    targetUrl: null,
    targetRoute: null,
    routePattern: null,
    price: "10000",
    priceUsdc: "0.01",
    currency: "USDC",
    network: "base-sepolia",
    networks: ["base-sepolia"],
    merchantWallet: who.tenant.walletAddress,
    facilitatorUrl: FACILITATOR.testnet,
    timeout: 60000,
    validityWindow: 300,
    allowedMethods: ALL_METHODS,
    allowedHeaders: [],
    fulfillmentMode: "PROXY",
    enabled: true,
    sessions: { enabled: false },
    headers: null,
    queryParams: null,
    cacheRules: null,
    inputSchema: null,
    outputSchema: null,
    outputExample: null,
    serviceId: null,
    userId: who.tenant.id,
    paymentUrls: { x402: null, mpp: null },
    createdAt: expect.stringMatching(ISO_DATE),
    updatedAt: expect.stringMatching(ISO_DATE),
    ...overrides,
  };
}

describe("POST /v1/paywalls", () => {
  it("ROUTE paywall with every field: 201 and the exact paywall", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia", "tempo-testnet"] });
    const body = {
      slug: "forecast.v1_daily-x",
      name: "Daily forecast",
      description: "One city",
      targetType: "ROUTE",
      targetRoute: "/v1//forecast/daily/",
      serviceId: svc.id,
      price: "1500000",
      currency: "USDC",
      network: "base-sepolia",
      networks: ["tempo-testnet", "base-sepolia"],
      fulfillmentMode: "SIGNED_URL",
      timeout: 120000,
      headers: [
        { key: "X-Upstream-Token", value: CANARY },
        { key: "x_other-1", value: `${CANARY}-2` },
      ],
      allowedMethods: ["GET", "POST"],
      queryParams: [{ key: "units", value: "metric" }],
      enabled: false,
      cacheRules: { ttl: 60, vary: ["city"] },
    };
    const res = await api("/v1/paywalls", { key: who.key, method: "POST", body });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      data: expected(who, {
        slug: "forecast.v1_daily-x",
        name: "Daily forecast",
        description: "One city",
        targetType: "ROUTE",
        targetRoute: "/v1//forecast/daily/",
        routePattern: "/v1/forecast/daily",
        price: "1500000",
        priceUsdc: "1.5",
        network: "tempo-testnet",
        networks: ["tempo-testnet", "base-sepolia"],
        fulfillmentMode: "SIGNED_URL",
        timeout: 120000,
        headers: [
          { key: "X-Upstream-Token", value: "***" },
          { key: "x_other-1", value: "***" },
        ],
        allowedMethods: ["GET", "POST"],
        queryParams: [{ key: "units", value: "metric" }],
        enabled: false,
        cacheRules: { ttl: 60, vary: ["city"] },
        serviceId: svc.id,
        paymentUrls: {
          x402: `${PAY}/api/x402/pay/${svc.id}/forecast.v1_daily-x`,
          mpp: `${PAY}/api/mpp/pay/${svc.id}/forecast.v1_daily-x`,
        },
      }),
      meta: { requestId: expect.stringMatching(/^req_/), timestamp: expect.stringMatching(ISO_DATE) },
    });
    expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
  });

  it("PROXY paywall without a service: defaults, no payment URLs, merchantWallet = tenant wallet", async () => {
    const who = await actor();
    const res = await api("/v1/paywalls", { key: who.key, method: "POST", body: proxyPaywallBody({ slug: "p" }) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toEqual(expected(who, { slug: "p", targetUrl: "https://api.weather.example.com/v1/forecast" }));
  });

  it("PROXY paywall in a service: x402 URL, and mpp only with a Tempo network", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia", "tempo-testnet"] });
    const noTempo = await createPaywall(who, proxyPaywallBody({ serviceId: svc.id, networks: ["base-sepolia"] }));
    expect(noTempo.paymentUrls).toEqual({ x402: `${PAY}/api/x402/pay/${svc.id}/${noTempo.slug}`, mpp: null });
    expect(noTempo.routePattern).toBeNull();
    const tempo = await createPaywall(who, proxyPaywallBody({ serviceId: svc.id, networks: ["base-sepolia", "tempo-testnet"] }));
    expect(tempo.paymentUrls).toEqual({
      x402: `${PAY}/api/x402/pay/${svc.id}/${tempo.slug}`,
      mpp: `${PAY}/api/mpp/pay/${svc.id}/${tempo.slug}`,
    });
    expect(tempo.network).toBe("base-sepolia");
  });

  it("mainnet: facilitatorUrl of mainnet, mpp with tempo", async () => {
    const who = await actor();
    const svc = await createService(who, { mode: "mainnet", networks: ["base", "tempo", "hyperevm"] });
    const pw = await createPaywall(who, routePaywallBody(svc.id, { networks: ["tempo", "base"] }));
    expect(pw).toMatchObject({
      facilitatorUrl: FACILITATOR.mainnet,
      network: "tempo",
      networks: ["tempo", "base"],
      paymentUrls: { x402: `${PAY}/api/x402/pay/${svc.id}/${pw.slug}`, mpp: `${PAY}/api/mpp/pay/${svc.id}/${pw.slug}` },
    });
    const noTempo = await createPaywall(who, routePaywallBody(svc.id, { networks: ["hyperevm"] }));
    expect(noTempo.paymentUrls.mpp).toBeNull();
  });

  it("a paywall without a service may use one mode's networks only, mainnet included", async () => {
    const who = await actor();
    const pw = await createPaywall(who, proxyPaywallBody({ networks: ["hyperevm", "tempo"] }));
    expect(pw).toMatchObject({
      facilitatorUrl: FACILITATOR.mainnet,
      network: "hyperevm",
      paymentUrls: { x402: null, mpp: null },
    });
  });

  it("boundaries are accepted: price 1 and 1000000000000000, timeout 30000 and 3600000, 50 headers, value 1000, slug 50", async () => {
    const who = await actor();
    const low = await createPaywall(who, proxyPaywallBody({ price: "1", timeout: 30000 }));
    expect(low).toMatchObject({ price: "1", timeout: 30000 });
    const high = await createPaywall(
      who,
      proxyPaywallBody({
        price: "1000000000000000",
        timeout: 3600000,
        slug: "s".repeat(50),
        name: "n".repeat(100),
        headers: Array.from({ length: 50 }, (_, i) => ({ key: `H-${i}`, value: "v".repeat(1000) })),
      }),
    );
    expect(high).toMatchObject({ price: "1000000000000000", timeout: 3600000, slug: "s".repeat(50) });
    expect(high.headers).toHaveLength(50);
  });

  it("every answer carries the price in USDC too (priceUsdc), derived from price digit by digit", async () => {
    const who = await actor();
    for (const [price, priceUsdc] of [
      ["10000", "0.01"],
      ["1", "0.000001"],
      ["1500000", "1.5"],
      ["1000000000000000", "1000000000"],
    ]) {
      const created = await createPaywall(who, proxyPaywallBody({ price }));
      expect(created, price).toMatchObject({ price, priceUsdc });
      const read = await api(`/v1/paywalls/${created.id}`, { key: who.key });
      expect(read.body.data, price).toMatchObject({ price, priceUsdc });
    }
    const [first] = (await api("/v1/paywalls?limit=1", { key: who.key })).body.data;
    expect(first.priceUsdc).toMatch(/^\d+(\.\d+)?$/);
  });

  it("the same slug is fine in another service and without a service", async () => {
    const who = await actor();
    const a = await createService(who);
    const b = await createService(who);
    await createPaywall(who, routePaywallBody(a.id, { slug: "same" }));
    await createPaywall(who, routePaywallBody(b.id, { slug: "same" }));
    await createPaywall(who, proxyPaywallBody({ slug: "same" }));
    const dup = await api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(a.id, { slug: "same" }) });
    expectError(dup, 409, "CONFLICT");
  });
});

describe("POST /v1/paywalls validation", () => {
  let who: Actor;
  let testnet: Service;
  beforeAll(async () => {
    who = await actor();
    testnet = await createService(who, { networks: ["base-sepolia", "tempo-testnet"] });
  });
  const post = (body: unknown) => api("/v1/paywalls", { key: who.key, method: "POST", body });
  const route = (overrides: Record<string, unknown>) => routePaywallBody(testnet.id, overrides);

  const CASES: [string, () => Record<string, unknown>, string][] = [
    ["empty slug", () => route({ slug: "" }), "slug"],
    ["slug of 51", () => route({ slug: "s".repeat(51) }), "slug"],
    ["slug with uppercase", () => route({ slug: "Forecast" }), "slug"],
    ["slug with a space", () => route({ slug: "a b" }), "slug"],
    ["slug with a slash", () => route({ slug: "a/b" }), "slug"],
    ["empty name", () => route({ name: "" }), "name"],
    ["name of 101", () => route({ name: "n".repeat(101) }), "name"],
    ["price 0", () => route({ price: "0" }), "price"],
    ["cacheRules.ttlSeconds as a string", () => route({ cacheRules: { ttlSeconds: "60" } }), "cacheRules.ttlSeconds"],
    ["cacheRules.ttlSeconds over a day", () => route({ cacheRules: { ttlSeconds: 86401 } }), "cacheRules.ttlSeconds"],
    ["cacheRules.statuses with a 404", () => route({ cacheRules: { ttlSeconds: 60, statuses: [404] } }), "cacheRules.statuses"],
    [
      "cacheRules.varyHeaders not a list",
      () => route({ cacheRules: { ttlSeconds: 60, varyHeaders: "Accept" } }),
      "cacheRules.varyHeaders",
    ],
    ["price 01", () => route({ price: "01" }), "price"],
    ["price 1.5", () => route({ price: "1.5" }), "price"],
    ["price -1", () => route({ price: "-1" }), "price"],
    ["price +1", () => route({ price: "+1" }), "price"],
    ["price 1e3", () => route({ price: "1e3" }), "price"],
    ["price with a space", () => route({ price: " 1" }), "price"],
    ["price empty", () => route({ price: "" }), "price"],
    ["price as a number", () => route({ price: 1000 }), "price"],
    ["price above the maximum", () => route({ price: "1000000000000001" }), "price"],
    ["price far above the maximum", () => route({ price: "99999999999999999999" }), "price"],
    ["timeout 29999", () => route({ timeout: 29999 }), "timeout"],
    ["timeout 3600001", () => route({ timeout: 3600001 }), "timeout"],
    ["timeout not an integer", () => route({ timeout: 30000.5 }), "timeout"],
    ["timeout as a string", () => route({ timeout: "60000" }), "timeout"],
    ["header key with a space", () => route({ headers: [{ key: "X Bad", value: "v" }] }), "headers.0.key"],
    [
      "header key with a colon",
      () =>
        route({
          headers: [
            { key: "ok", value: "v" },
            { key: "X:Bad", value: "v" },
          ],
        }),
      "headers.1.key",
    ],
    ["empty header key", () => route({ headers: [{ key: "", value: "v" }] }), "headers.0.key"],
    ["header value of 1001", () => route({ headers: [{ key: "X-A", value: "v".repeat(1001) }] }), "headers.0.value"],
    ["51 headers", () => route({ headers: Array.from({ length: 51 }, (_, i) => ({ key: `H${i}`, value: "v" })) }), "headers"],
    [
      "duplicate header keys",
      () =>
        route({
          headers: [
            { key: "X-A", value: "1" },
            { key: "X-A", value: "2" },
          ],
        }),
      "headers",
    ],
    [
      "duplicate header keys in another case",
      () =>
        route({
          headers: [
            { key: "X-A", value: "1" },
            { key: "x-a", value: "2" },
          ],
        }),
      "headers",
    ],
    ["header with an extra field", () => route({ headers: [{ key: "X-A", value: "1", secret: true }] }), "headers.0.secret"],
    ["*** header value on create", () => route({ headers: [{ key: "X-A", value: "***" }] }), "headers"],
    ["empty allowedMethods", () => route({ allowedMethods: [] }), "allowedMethods"],
    ["unknown method", () => route({ allowedMethods: ["GET", "DELETE"] }), "allowedMethods.1"],
    ["currency USD", () => route({ currency: "USD" }), "currency"],
    ["currency usdc", () => route({ currency: "usdc" }), "currency"],
    ["unknown targetType", () => route({ targetType: "REDIRECT" }), "targetType"],
    ["unknown fulfillmentMode", () => route({ fulfillmentMode: "EMAIL" }), "fulfillmentMode"],
    ["PROXY without targetUrl", () => proxyPaywallBody({ targetUrl: undefined }), "targetUrl"],
    ["PROXY with a null targetUrl", () => proxyPaywallBody({ targetUrl: null }), "targetUrl"],
    ["ROUTE without targetRoute", () => route({ targetRoute: undefined }), "targetRoute"],
    ["ROUTE without serviceId", () => route({ serviceId: undefined }), "serviceId"],
    ["targetRoute without leading /", () => route({ targetRoute: "v1/forecast" }), "targetRoute"],
    ["targetUrl not a URL", () => proxyPaywallBody({ targetUrl: "forecast" }), "targetUrl"],
    ["empty networks", () => route({ networks: [] }), "networks"],
    ["unknown network", () => route({ networks: ["polygon"] }), "networks.0"],
    ["duplicate networks", () => route({ networks: ["base-sepolia", "base-sepolia"] }), "networks"],
    ["network not in networks", () => route({ network: "tempo-testnet", networks: ["base-sepolia"] }), "network"],
    ["networks of the other mode than the service", () => route({ networks: ["base-sepolia", "base"] }), "networks.1"],
    ["mainnet networks on a testnet service", () => route({ networks: ["tempo"] }), "networks.0"],
    ["no service and mixed modes", () => proxyPaywallBody({ networks: ["base-sepolia", "base"] }), "networks"],
    ["queryParams item without value", () => route({ queryParams: [{ key: "a" }] }), "queryParams.0.value"],
    ["unknown field", () => route({ colour: "red" }), "colour"],
    ["mass assignment: merchantWallet", () => route({ merchantWallet: `0x${"a".repeat(40)}` }), "merchantWallet"],
    ["mass assignment: userId", () => route({ userId: "ten_x" }), "userId"],
    ["mass assignment: id", () => route({ id: "pw_x" }), "id"],
    ["mass assignment: routePattern", () => route({ routePattern: "/x" }), "routePattern"],
    ["allowedHeaders on create", () => route({ allowedHeaders: ["x"] }), "allowedHeaders"],
  ];

  it.each(CASES)("%s → 400 naming the field", async (_, body, path) => {
    expectInvalid(await post(body()), path);
  });

  it.each([
    ["0.01", 'for 0.01 USDC send "10000"'],
    ["1.5", 'for 1.5 USDC send "1500000"'],
    ["0.000001", 'for 0.000001 USDC send "1"'],
  ])("price %j (decimal USDC) is refused with the micro-USDC string it stands for", async (price, hint) => {
    expectInvalid(await post(route({ price })), "price", new RegExp(`micro-USDC.*${hint.replace(".", "\\.")}`));
  });

  it.each([
    [0.01, 'for 0.01 USDC send "10000"'],
    [10000, 'send "10000"'],
  ])("price %j as a JSON number is refused naming the string to send", async (price, hint) => {
    const res = await post(route({ price }));
    expectInvalid(res, "price", /^Must be a string/);
    expect(res.body.details.find((d: { path: string }) => d.path === "price").message).toContain(hint);
  });

  it("a price no decimal reading can save gets the rule alone, without a guess", async () => {
    for (const price of ["0.0000001", "0.00", "abc", "-0.5"]) {
      const res = await post(route({ price }));
      expectInvalid(res, "price", /^Integer micro-USDC/);
      expect(res.text, price).not.toContain("send");
    }
  });

  it.each(["slug", "name", "targetType", "price", "currency", "fulfillmentMode", "networks"])(
    "missing %s → 400 naming it",
    async (field) => {
      const body: Record<string, unknown> = route({});
      delete body[field];
      expectInvalid(await post(body), field);
    },
  );

  it("merchantWallet equal to the tenant's own wallet is still refused on create", async () => {
    expectInvalid(await post(route({ merchantWallet: who.tenant.walletAddress })), "merchantWallet");
  });

  it("malformed JSON, an array body and a non-JSON type are refused", async () => {
    expectError(await post("{"), 400, "VALIDATION_ERROR");
    expectInvalid(await post("[]"), "");
    const res = await api("/v1/paywalls", {
      key: who.key,
      method: "POST",
      body: JSON.stringify(route({})),
      headers: { "content-type": "text/plain;charset=UTF-8" },
    });
    expectError(res, 415, "VALIDATION_ERROR");
  });

  it("nothing was created by any refused request", async () => {
    const list = await api("/v1/paywalls", { key: who.key });
    expect(list.body.meta.pagination.total).toBe(0);
  });
});

describe("GET /v1/paywalls/{id}", () => {
  it("200 with the paywall as created", async () => {
    const who = await actor();
    const svc = await createService(who);
    const pw = await createPaywall(who, routePaywallBody(svc.id, { headers: [{ key: "X-A", value: CANARY }] }));
    const res = await api(`/v1/paywalls/${pw.id}`, { key: who.key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: pw, meta: { requestId: expect.any(String), timestamp: expect.stringMatching(ISO_DATE) } });
  });

  it("unknown id → 404 NOT_FOUND", async () => {
    const who = await actor();
    expectError(await api("/v1/paywalls/pw_000000000000000000000000", { key: who.key }), 404, "NOT_FOUND");
  });
});

describe("PATCH /v1/paywalls/{id}", () => {
  it("only the sent fields change; createdAt stays, updatedAt moves", async () => {
    const clock = useTestClock();
    const who = await actor();
    const svc = await createService(who);
    const before = await createPaywall(
      who,
      routePaywallBody(svc.id, {
        headers: [{ key: "X-A", value: CANARY }],
        queryParams: [{ key: "q", value: "1" }],
        cacheRules: { a: 1 },
      }),
    );
    clock.advance(1000);
    const res = await api(`/v1/paywalls/${before.id}`, { key: who.key, method: "PATCH", body: { price: "20000" } });
    expect(res.status, res.text).toBe(200);
    const { updatedAt, ...rest } = res.body.data;
    const { updatedAt: oldUpdatedAt, ...oldRest } = before;
    expect(rest).toEqual({ ...oldRest, price: "20000", priceUsdc: "0.02" });
    expect(Date.parse(updatedAt)).toBe(Date.parse(oldUpdatedAt) + 1000);
    expect((await api(`/v1/paywalls/${before.id}`, { key: who.key })).body.data).toEqual(res.body.data);
  });

  it("every simple field can change", async () => {
    const who = await actor();
    const svc = await createService(who);
    const before = await createPaywall(who, routePaywallBody(svc.id));
    const patch = {
      name: "Renamed",
      description: "Now described",
      targetRoute: "/v2/forecast//",
      price: "1",
      currency: "USDC",
      timeout: 3600000,
      allowedMethods: ["PUT"],
      allowedHeaders: ["x-city", "accept"],
      queryParams: [{ key: "k", value: "v" }],
      enabled: false,
    };
    const res = await api(`/v1/paywalls/${before.id}`, { key: who.key, method: "PATCH", body: patch });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      ...before,
      ...patch,
      priceUsdc: "0.000001",
      routePattern: "/v2/forecast",
      updatedAt: expect.stringMatching(ISO_DATE),
    });
    const cleared = await api(`/v1/paywalls/${before.id}`, {
      key: who.key,
      method: "PATCH",
      body: { description: null, queryParams: null },
    });
    expect(cleared.body.data).toMatchObject({ description: null, queryParams: null });
  });

  it("networks replaces the whole list; network follows networks[0] and mpp follows Tempo", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    const pw = await createPaywall(who, routePaywallBody(svc.id, { networks: ["base-sepolia", "arc-testnet"] }));
    const res = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { networks: ["tempo-testnet"] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      networks: ["tempo-testnet"],
      network: "tempo-testnet",
      paymentUrls: { x402: `${PAY}/api/x402/pay/${svc.id}/${pw.slug}`, mpp: `${PAY}/api/mpp/pay/${svc.id}/${pw.slug}` },
    });
    expect((await storedPaywall(pw.id))?.networks).toEqual(["tempo-testnet"]);
    // Networks of the other mode than the service: refused, nothing changed.
    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { networks: ["base"] } }),
      "networks.0",
    );
    expectInvalid(await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { networks: [] } }), "networks");
    expect((await storedPaywall(pw.id))?.networks).toEqual(["tempo-testnet"]);
  });

  it("headers replace the list; *** keeps an existing key's ciphertext; a new value changes it; *** for a new key → 400", async () => {
    const who = await actor();
    const pw = await createPaywall(
      who,
      proxyPaywallBody({
        headers: [
          { key: "X-Keep", value: CANARY },
          { key: "X-Change", value: `${CANARY}-c` },
          { key: "X-Drop", value: `${CANARY}-d` },
        ],
      }),
    );
    const stored = new Map((await storedPaywall(pw.id))?.headers?.map((h) => [h.key, h.value]));
    expect(stored.get("X-Keep")).toMatch(/^v1\./);

    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, {
        key: who.key,
        method: "PATCH",
        body: {
          headers: [
            { key: "X-Keep", value: "***" },
            { key: "X-New", value: "***" },
          ],
        },
      }),
      "headers",
    );
    expect((await storedPaywall(pw.id))?.headers).toHaveLength(3);

    const res = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: {
        headers: [
          { key: "X-Keep", value: "***" },
          { key: "X-Change", value: `${CANARY}-c2` },
          { key: "X-New", value: `${CANARY}-n` },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.headers).toEqual([
      { key: "X-Keep", value: "***" },
      { key: "X-Change", value: "***" },
      { key: "X-New", value: "***" },
    ]);
    const after = (await storedPaywall(pw.id))?.headers ?? [];
    expect(after.map((h) => h.key)).toEqual(["X-Keep", "X-Change", "X-New"]);
    expect(after[0]?.value).toBe(stored.get("X-Keep"));
    expect(after[1]?.value).not.toBe(stored.get("X-Change"));
    expect(after[1]?.value).toMatch(/^v1\./);
    expect(after[2]?.value).toMatch(/^v1\./);

    const cleared = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { headers: null } });
    expect(cleared.body.data.headers).toBeNull();
    expect((await storedPaywall(pw.id))?.headers).toBeNull();
    // After clearing, *** has nothing to keep.
    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { headers: [{ key: "X-Keep", value: "***" }] } }),
      "headers",
    );
  });

  it("serviceId: null detaches a PROXY paywall (payment URLs become null); a ROUTE paywall cannot be detached", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["tempo-testnet"] });
    const proxy = await createPaywall(who, proxyPaywallBody({ serviceId: svc.id, networks: ["tempo-testnet"] }));
    const route = await createPaywall(who, routePaywallBody(svc.id, { networks: ["tempo-testnet"] }));

    expectInvalid(
      await api(`/v1/paywalls/${route.id}`, { key: who.key, method: "PATCH", body: { serviceId: null } }),
      "serviceId",
    );
    expect((await storedPaywall(route.id))?.serviceId).toBe(svc.id);

    const res = await api(`/v1/paywalls/${proxy.id}`, { key: who.key, method: "PATCH", body: { serviceId: null } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ serviceId: null, paymentUrls: { x402: null, mpp: null } });
    const svcNow = await api(`/v1/services/${svc.id}`, { key: who.key });
    expect(svcNow.body.data.Paywall.map((p: { id: string }) => p.id)).toEqual([route.id]);
  });

  it("moving a paywall: to a service of the same mode works; of another mode → 400; a taken slug → 409", async () => {
    const who = await actor();
    const a = await createService(who, { networks: ["base-sepolia"] });
    const b = await createService(who, { networks: ["base-sepolia"] });
    const main = await createService(who, { mode: "mainnet", networks: ["base"] });
    const pw = await createPaywall(who, routePaywallBody(a.id, { slug: "mover" }));

    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { serviceId: main.id } }),
      "networks.0",
    );
    const moved = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { serviceId: b.id } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.data).toMatchObject({ serviceId: b.id, paymentUrls: { x402: `${PAY}/api/x402/pay/${b.id}/mover` } });

    // Moving with matching networks in the same request is fine.
    const both = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { serviceId: main.id, networks: ["base"] },
    });
    expect(both.status, both.text).toBe(200);

    await createPaywall(who, routePaywallBody(a.id, { slug: "taken" }));
    const other = await createPaywall(who, routePaywallBody(b.id, { slug: "taken" }));
    expectError(
      await api(`/v1/paywalls/${other.id}`, { key: who.key, method: "PATCH", body: { serviceId: a.id } }),
      409,
      "CONFLICT",
    );
    expect((await storedPaywall(other.id))?.serviceId).toBe(b.id);
  });

  it("targetType changes are validated against the result", async () => {
    const who = await actor();
    const svc = await createService(who);
    const proxy = await createPaywall(who, proxyPaywallBody());
    // PROXY → ROUTE needs a route and a service.
    const res = await api(`/v1/paywalls/${proxy.id}`, { key: who.key, method: "PATCH", body: { targetType: "ROUTE" } });
    expectInvalid(res, "targetRoute");
    expectInvalid(res, "serviceId");
    const ok = await api(`/v1/paywalls/${proxy.id}`, {
      key: who.key,
      method: "PATCH",
      body: { targetType: "ROUTE", targetRoute: "/r", serviceId: svc.id },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toMatchObject({
      targetType: "ROUTE",
      targetRoute: "/r",
      routePattern: "/r",
      targetUrl: null,
      serviceId: svc.id,
    });
    // ROUTE → PROXY needs a targetUrl.
    expectInvalid(
      await api(`/v1/paywalls/${proxy.id}`, { key: who.key, method: "PATCH", body: { targetType: "PROXY" } }),
      "targetUrl",
    );
    const back = await api(`/v1/paywalls/${proxy.id}`, {
      key: who.key,
      method: "PATCH",
      body: { targetType: "PROXY", targetUrl: "https://up.example.com/x" },
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({
      targetType: "PROXY",
      targetUrl: "https://up.example.com/x",
      targetRoute: null,
      routePattern: null,
    });
    // A PROXY paywall's targetUrl cannot be removed.
    expectInvalid(
      await api(`/v1/paywalls/${proxy.id}`, { key: who.key, method: "PATCH", body: { targetUrl: null } }),
      "targetUrl",
    );
  });

  it("merchantWallet: the tenant's walletAddress or tempoWalletAddress in any case; another wallet → 400 INVALID_WALLET", async () => {
    const who = await actor();
    const pw = await createPaywall(who, proxyPaywallBody());
    const upper = `0x${who.tenant.walletAddress.slice(2).toUpperCase()}`;
    const tempo = who.tenant.tempoWalletAddress as string;

    const toTempo = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { merchantWallet: `0x${tempo.slice(2).toUpperCase()}` },
    });
    expect(toTempo.status, toTempo.text).toBe(200);
    expect(toTempo.body.data.merchantWallet.toLowerCase()).toBe(tempo.toLowerCase());

    const back = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { merchantWallet: upper } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.merchantWallet.toLowerCase()).toBe(who.tenant.walletAddress.toLowerCase());

    const stranger = await actor();
    const res = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { merchantWallet: stranger.tenant.walletAddress },
    });
    expectError(res, 400, "INVALID_WALLET");
    expectError(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { merchantWallet: `0x${"0".repeat(40)}` } }),
      400,
      "INVALID_WALLET",
    );
    expect((await storedPaywall(pw.id))?.merchantWallet.toLowerCase()).toBe(who.tenant.walletAddress.toLowerCase());
    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { merchantWallet: "0x123" } }),
      "merchantWallet",
    );
  });

  it.each([
    ["slug", { slug: "new-slug" }, "slug"],
    ["fulfillmentMode", { fulfillmentMode: "SIGNED_URL" }, "fulfillmentMode"],
    ["cacheRules.ttlSeconds as a string", { cacheRules: { ttlSeconds: "60" } }, "cacheRules.ttlSeconds"],
    ["cacheRules.statuses with a 404", { cacheRules: { ttlSeconds: 60, statuses: [404] } }, "cacheRules.statuses"],
    ["cacheRules as a list", { cacheRules: [{ ttlSeconds: 60 }] }, "cacheRules"],
    ["userId", { userId: "ten_x" }, "userId"],
    ["id", { id: "pw_x" }, "id"],
    ["unknown field", { colour: "red" }, "colour"],
    ["price 01", { price: "01" }, "price"],
    ["price as a number", { price: 5 }, "price"],
    ["timeout 29999", { timeout: 29999 }, "timeout"],
    ["empty allowedMethods", { allowedMethods: [] }, "allowedMethods"],
    ["currency EUR", { currency: "EUR" }, "currency"],
    ["header value of 1001", { headers: [{ key: "k", value: "v".repeat(1001) }] }, "headers.0.value"],
    ["allowedHeaders item of 101", { allowedHeaders: ["h".repeat(101)] }, "allowedHeaders.0"],
    ["targetRoute without /", { targetRoute: "x" }, "targetRoute"],
    ["a targetUrl on a ROUTE paywall", { targetUrl: "https://up.example.com" }, "targetUrl"],
  ])("%s → 400 naming the field, nothing changed", async (_, patch, path) => {
    const who = await actor();
    const svc = await createService(who);
    const before = await createPaywall(who, routePaywallBody(svc.id));
    expectInvalid(await api(`/v1/paywalls/${before.id}`, { key: who.key, method: "PATCH", body: patch }), path);
    expect((await api(`/v1/paywalls/${before.id}`, { key: who.key })).body.data).toEqual(before);
  });

  it("unknown id → 404 NOT_FOUND", async () => {
    const who = await actor();
    expectError(
      await api("/v1/paywalls/pw_000000000000000000000000", { key: who.key, method: "PATCH", body: { name: "x" } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("DELETE /v1/paywalls/{id}", () => {
  it("200 {id, deleted: true}; gone from GET, the list and its service", async () => {
    const who = await actor();
    const svc = await createService(who);
    const keep = await createPaywall(who, routePaywallBody(svc.id));
    const pw = await createPaywall(who, routePaywallBody(svc.id));
    const res = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "DELETE" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      data: { id: pw.id, deleted: true },
      meta: { requestId: expect.any(String), timestamp: expect.any(String) },
    });
    expectError(await api(`/v1/paywalls/${pw.id}`, { key: who.key }), 404, "NOT_FOUND");
    expectError(await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "DELETE" }), 404, "NOT_FOUND");
    expect(await storedPaywall(pw.id)).toBeUndefined();
    const list = await api("/v1/paywalls", { key: who.key });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([keep.id]);
    expect((await api(`/v1/services/${svc.id}`, { key: who.key })).body.data.Paywall.map((p: { id: string }) => p.id)).toEqual([
      keep.id,
    ]);
    // The slug is free again.
    await createPaywall(who, routePaywallBody(svc.id, { slug: pw.slug }));
  });
});

describe("PATCH /v1/paywalls/{id} cacheRules (an extension: the specification makes it create-only)", () => {
  it("sets, replaces and clears the rules; each read back as sent, the version bumped", async () => {
    const who = await actor();
    const svc = await createService(who);
    const pw = await createPaywall(who, routePaywallBody(svc.id));
    const patch = (cacheRules: unknown) => api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { cacheRules } });

    const tagBefore = (await api(`/v1/paywalls/${pw.id}`, { key: who.key })).headers.get("ETag");
    const rules = { ttlSeconds: 300, varyQuery: ["city"], varyHeaders: ["Accept"], varyBody: false, statuses: [200, 304] };
    const set = await patch(rules);
    expect(set.status).toBe(200);
    expect(set.body.data.cacheRules).toEqual(rules);
    expect((await storedPaywall(pw.id))?.cacheRules).toEqual(rules);
    expect(set.headers.get("ETag")).not.toBe(tagBefore);

    expect((await patch({ ttlSeconds: 60 })).body.data.cacheRules).toEqual({ ttlSeconds: 60 });
    const cleared = await patch(null);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.cacheRules).toBeNull();
    expect((await api(`/v1/paywalls/${pw.id}`, { key: who.key })).body.data.cacheRules).toBeNull();
  });

  it("a known key of the wrong shape → 400 naming it, the stored rules unchanged", async () => {
    const who = await actor();
    const svc = await createService(who);
    const pw = await createPaywall(who, routePaywallBody(svc.id, { cacheRules: { ttlSeconds: 60 } }));
    const res = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { cacheRules: { ttlSeconds: 86401, varyBody: "yes" } },
    });
    expectInvalid(res, "cacheRules.ttlSeconds");
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain("cacheRules.varyBody");
    expect((await storedPaywall(pw.id))?.cacheRules).toEqual({ ttlSeconds: 60 });
  });
});
