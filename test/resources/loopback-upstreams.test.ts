// Upstreams on this machine: allowed under `npm run dev` only (its dev-only var and a loopback payment origin), and
// then only loopback; the deployed rules refuse them (test/resources/upstream-urls.test.ts holds those unchanged).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { type Actor, actor, createService, expectError, proxyPaywallBody, serviceBody } from "../support/resources.ts";

/** What `npm run dev` passes the Worker. */
const DEV = { UPSTREAMS_ALLOW_LOOPBACK: "on", PAYMENT_BASE_URL: "http://127.0.0.1:8787" } as Partial<Env>;

const LOOPBACK = ["http://127.0.0.1:3000", "http://localhost:3000/api", "http://[::1]:3000/", "http://127.5.6.7/"];

/** Every other private, reserved or internal target, still refused under `npm run dev`. */
const STILL_BLOCKED = [
  "http://10.0.0.7/",
  "http://192.168.1.10:3000/",
  "http://172.16.0.1/",
  "http://169.254.169.254/latest/meta-data/",
  "http://0.0.0.0:3000/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1]/",
  "http://[::ffff:10.0.0.1]/",
  "http://api.localhost:3000/",
  "http://printer.local/",
  "https://foo.internal/",
  "http://user:pw@localhost:3000/",
  "file:///etc/passwd",
];

const createWith = (who: Actor, baseUrl: string, vars?: Partial<Env>) =>
  api("/v1/services", { key: who.key, method: "POST", body: serviceBody({ baseUrl }), ...(vars ? { env: vars } : {}) });

describe("upstreams on this machine", () => {
  let who: Actor;
  beforeAll(async () => {
    who = await actor();
  });

  it("are refused by default and with the var alone on a deployed payment origin", async () => {
    // wrangler.toml (the deployed configuration) never sets it.
    expect((env as unknown as Record<string, unknown>).UPSTREAMS_ALLOW_LOOPBACK).toBeUndefined();
    for (const vars of [undefined, { UPSTREAMS_ALLOW_LOOPBACK: "on" } as Partial<Env>]) {
      for (const url of LOOPBACK) expectError(await createWith(who, url, vars), 400, "SSRF_BLOCKED");
    }
  });

  it.each(LOOPBACK)("under npm run dev: a service on %s is created and can be moved there", async (url) => {
    const created = await createWith(who, url, DEV);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.baseUrl).toBe(new URL(url).href);
    const svc = await createService(who);
    const moved = await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { baseUrl: url }, env: DEV });
    expect(moved.status, moved.text).toBe(200);
    // A PROXY paywall's own targetUrl on this machine too.
    const paywall = await api("/v1/paywalls", {
      key: who.key,
      method: "POST",
      body: proxyPaywallBody({ targetUrl: new URL("/v1/forecast", url).href }),
      env: DEV,
    });
    expect(paywall.status, paywall.text).toBe(201);
  });

  it.each(STILL_BLOCKED)("under npm run dev: %s is still refused", async (url) => {
    const res = await createWith(who, url, DEV);
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "baseUrl", message: res.body.error, reason: expect.any(String) }]);
    const paywall = await api("/v1/paywalls", {
      key: who.key,
      method: "POST",
      body: proxyPaywallBody({ targetUrl: url }),
      env: DEV,
    });
    expectError(paywall, 400, "SSRF_BLOCKED");
  });

  it("under npm run dev: the links buyers follow (docs) still never name this machine", async () => {
    const res = await api("/v1/services", {
      key: who.key,
      method: "POST",
      body: serviceBody({ baseUrl: "http://127.0.0.1:3000", docsHomepage: "http://localhost:3000/docs" }),
      env: DEV,
    });
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "docsHomepage", message: res.body.error, reason: "blocked_hostname" }]);
  });
});
