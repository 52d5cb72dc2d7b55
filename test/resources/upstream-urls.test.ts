// SSRF over HTTP: `baseUrl` and `targetUrl` on create and on update.
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import {
  type Actor,
  actor,
  createPaywall,
  createService,
  expectError,
  proxyPaywallBody,
  serviceBody,
  storedPaywall,
  storedService,
} from "../support/resources.ts";

const BLOCKED: [string, string][] = [
  ["http://127.0.0.1/", "private_address"],
  ["http://127.1:8080/x", "private_address"],
  ["http://2130706433/", "private_address"],
  ["https://10.1.2.3/api", "private_address"],
  ["http://169.254.169.254/latest/meta-data/", "private_address"],
  ["http://[::1]/", "private_address"],
  ["http://[::ffff:127.0.0.1]/", "private_address"],
  ["http://[fd00:ec2::254]/", "private_address"],
  ["http://localhost:3000/", "blocked_hostname"],
  ["http://api.localhost/", "blocked_hostname"],
  ["https://foo.internal/", "blocked_hostname"],
  ["https://metadata/computeMetadata/v1", "blocked_hostname"],
  ["file:///etc/passwd", "scheme_not_allowed"],
  ["gopher://api.example.com/", "scheme_not_allowed"],
  ["https://user:pass@api.example.com/", "userinfo_not_allowed"],
];

const ALLOWED = [
  "https://api.example.com",
  "http://93.184.216.34:8080/v1",
  "https://[2606:4700::1111]/",
  "https://sub.domain.example.org./path?q=1",
];

describe("SSRF on services.baseUrl", () => {
  let who: Actor;
  beforeAll(async () => {
    who = await actor();
  });

  it.each(BLOCKED)("create with %s → 400 SSRF_BLOCKED (%s)", async (url, reason) => {
    const res = await api("/v1/services", { key: who.key, method: "POST", body: serviceBody({ baseUrl: url }) });
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "baseUrl", message: res.body.error, reason }]);
  });

  it.each(BLOCKED)("update to %s → 400 SSRF_BLOCKED (%s), baseUrl unchanged", async (url, reason) => {
    const svc = await createService(who);
    const res = await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { baseUrl: url, name: "changed" } });
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "baseUrl", message: res.body.error, reason }]);
    expect(await storedService(svc.id)).toMatchObject({ baseUrl: svc.baseUrl, name: svc.name });
  });

  it.each(ALLOWED)("public URL %s is accepted on create and update", async (url) => {
    const svc = await createService(who, { baseUrl: url });
    expect(svc.baseUrl).toBe(new URL(url).href); // stored as the normalized URL that was checked
    const res = await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { baseUrl: url } });
    expect(res.status, res.text).toBe(200);
  });
});

describe("SSRF on paywalls.targetUrl", () => {
  let who: Actor;
  beforeAll(async () => {
    who = await actor();
  });

  it.each(BLOCKED)("create with %s → 400 SSRF_BLOCKED (%s)", async (url, reason) => {
    const res = await api("/v1/paywalls", { key: who.key, method: "POST", body: proxyPaywallBody({ targetUrl: url }) });
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "targetUrl", message: res.body.error, reason }]);
  });

  it.each(BLOCKED)("update to %s → 400 SSRF_BLOCKED (%s), targetUrl unchanged", async (url, reason) => {
    const pw = await createPaywall(who, proxyPaywallBody());
    const res = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { targetUrl: url, price: "5" } });
    expectError(res, 400, "SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "targetUrl", message: res.body.error, reason }]);
    expect(await storedPaywall(pw.id)).toMatchObject({ targetUrl: pw.targetUrl, price: pw.price });
  });

  it("a ROUTE → PROXY switch checks the new targetUrl too", async () => {
    const svc = await createService(who);
    const pw = await createPaywall(who, {
      ...proxyPaywallBody({ targetType: "ROUTE", targetRoute: "/r", serviceId: svc.id }),
      targetUrl: undefined,
    });
    const res = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { targetType: "PROXY", targetUrl: "http://10.0.0.1/" },
    });
    expectError(res, 400, "SSRF_BLOCKED");
    expect((await storedPaywall(pw.id))?.targetType).toBe("ROUTE");
  });

  it.each(ALLOWED)("public URL %s is accepted on create and update", async (url) => {
    const pw = await createPaywall(who, proxyPaywallBody({ targetUrl: url }));
    expect(pw.targetUrl).toBe(new URL(url).href);
    const res = await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { targetUrl: url } });
    expect(res.status, res.text).toBe(200);
  });

  it("no paywall was created by a blocked request", async () => {
    const list = await api("/v1/paywalls?limit=100", { key: who.key });
    for (const p of list.body.data) expect(BLOCKED.map(([u]) => u)).not.toContain(p.targetUrl);
  });
});
