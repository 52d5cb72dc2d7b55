// The dashboard as a demanding user meets it, in a real headless Chromium against the production bundle: a reload or
// Back after creating a key creates nothing; one click on a destructive action changes nothing until confirmed; a
// service and a paywall created and edited in the browser are what the API returns; a keyboard-only walk creates a
// key; and axe-core finds nothing on any page at 1280 px and 390 px. Every page is saved at both widths under
// test-output/screenshots/ (`<page>-1280.png`, `<page>-390.png`).
import type { Browser, ElementHandle, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { findTenantById } from "../../src/db/tenants.ts";
import { checkPage } from "./support/axe.ts";
import { launchBrowser, openPage, type PageProblems } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8863 }), launchBrowser()]);
  const db = getDb(await worker.db());
  const tenant = await findTenantById(db, worker.tenantId);
  if (!tenant) throw new Error("no demo tenant");
  await writeDemoData(db, tenant, 120);
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const inPage = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`(${fn})()`) as Promise<T>;
/** The id of the focused element once `autofocus` has run: Chromium applies it at a rendering step after `load`. */
async function focusedId(page: Page, expected: string) {
  await page
    .waitForFunction(`document.activeElement && document.activeElement.id === ${JSON.stringify(expected)}`, { timeout: 3000 })
    .catch(() => undefined);
  return inPage<string>(page, "() => document.activeElement.id");
}
const textOf = (page: Page, selector: string) =>
  page.$eval(selector, (el) => ((el as unknown as { textContent: string }).textContent ?? "").replace(/\s+/g, " ").trim());

async function signIn(page: Page) {
  const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
  await page.goto(link.url, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("main form button[type=submit]")]);
}

/** The button or link whose accessible text (as a screen reader reads it: visible and sr-only text) starts with `label`. */
async function control(page: Page, label: string, scope = "main") {
  const handle = await page.evaluateHandle(
    `[...document.querySelectorAll(${JSON.stringify(`${scope} button, ${scope} a`)})].find((el) => (el.getAttribute("aria-label") || el.textContent).replace(/\\s+/g, " ").trim().startsWith(${JSON.stringify(label)}))`,
  );
  const element = handle.asElement();
  expect(element, `a control named "${label}…"`).not.toBeNull();
  return element as ElementHandle<Element>;
}

async function click(page: Page, label: string, scope = "main") {
  const element = await control(page, label, scope);
  await Promise.all([page.waitForNavigation({ waitUntil: "load", timeout: 10_000 }), element.click()]);
}

async function api(path: string, init: RequestInit = {}) {
  const res = await fetch(`${worker.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${worker.key}`, "content-type": "application/json", ...init.headers },
  });
  return { status: res.status, body: (await res.json()) as { data: Record<string, unknown>; code?: string } };
}

const count = async (sql: string, ...values: unknown[]) =>
  (
    await (
      await worker.db()
    )
      .prepare(sql)
      .bind(...values)
      .first<{ n: number }>()
  )?.n ?? 0;

/** Fills a text field (cleared first). */
async function fill(page: Page, selector: string, value: string) {
  await page.$eval(selector, (el) => {
    (el as unknown as { value: string }).value = "";
  });
  await page.type(selector, value);
}

function expectClean(problems: PageProblems) {
  expect(problems.errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e))).toEqual(
    [],
  );
  expect(problems.foreign).toEqual([]);
}

describe("safe forms", () => {
  it("a reload or Back after creating a key creates nothing and shows the key no more", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    // axe needs its script in the page: the page's CSP would refuse it (the dashboard itself loads none).
    await page.setBypassCSP(true);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    const before = await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", worker.tenantId);
    await page.click("#create-heading");
    await page.type("#new-name", "reload-proof");
    await page.click("#new-preset-read-only");
    await click(page, "Create key");
    expect(new URL(page.url()).searchParams.get("shown")).toMatch(/^[0-9a-f]{32}$/);
    const key = await textOf(page, "#new-key");
    expect(key).toMatch(/^mpk_[0-9a-f]{64}$/);
    await checkPage(page, "keys-created");
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", worker.tenantId)).toBe(before + 1);

    await page.reload({ waitUntil: "load" });
    expect(await page.$("#new-key")).toBeNull();
    expect(await page.content()).not.toContain(key);
    expect(await textOf(page, "main .notice.ok")).toContain("nothing was created by reloading");
    await page.goBack({ waitUntil: "load" });
    await page.goForward({ waitUntil: "load" }).catch(() => undefined);
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", worker.tenantId)).toBe(before + 1);
    // The preset gave the read scopes.
    const me = await fetch(`${worker.url}/v1/paywalls`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    const write = await fetch(`${worker.url}/v1/services`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(write.status).toBe(403);
    expectClean(problems);
    await page.close();
  });

  it("one click on revoke, delete or disable changes nothing until the confirming button, named by its action, is pressed", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    const svc = await api("/v1/services", {
      method: "POST",
      body: JSON.stringify({
        name: "Doomed API",
        baseUrl: "https://doomed.example.com",
        authMethod: "none",
        networks: ["base-sepolia"],
        mode: "testnet",
      }),
    });
    const pw = await api("/v1/paywalls", {
      method: "POST",
      body: JSON.stringify({
        slug: "doomed",
        name: "Doomed route",
        targetType: "ROUTE",
        targetRoute: "/v1/doomed",
        serviceId: svc.body.data.id,
        price: "5000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      }),
    });
    const pwId = pw.body.data.id as string;
    const svcId = svc.body.data.id as string;

    // Keys: revoke, then delete.
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    await page.click("#create-heading");
    await page.type("#new-name", "ci-deploy");
    await page.click("#new-preset-full");
    await click(page, "Create key");
    const key = await textOf(page, "#new-key");
    const meWith = async () => (await fetch(`${worker.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status;
    await click(page, "Revoke key ci-deploy");
    expect(new URL(page.url()).pathname).toMatch(/\/revoke$/);
    expect(await meWith()).toBe(200);
    await checkPage(page, "key-revoke-confirm");
    await click(page, "Revoke key ci-deploy");
    expect(await meWith()).toBe(401);
    await click(page, "Delete key ci-deploy");
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE name = 'ci-deploy'")).toBe(1);
    await click(page, "Delete key ci-deploy");
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE name = 'ci-deploy'")).toBe(0);

    // A paywall: disable, then delete; then the service.
    await page.goto(`${worker.url}/dashboard/services`, { waitUntil: "load" });
    await click(page, "Disable paywall Doomed route");
    expect((await api(`/v1/paywalls/${pwId}`)).body.data.enabled).toBe(true);
    await checkPage(page, "paywall-disable-confirm");
    await click(page, "Disable paywall Doomed route");
    expect((await api(`/v1/paywalls/${pwId}`)).body.data.enabled).toBe(false);
    await click(page, "Delete paywall Doomed route");
    expect((await api(`/v1/paywalls/${pwId}`)).status).toBe(200);
    await click(page, "Delete paywall Doomed route");
    expect((await api(`/v1/paywalls/${pwId}`)).status).toBe(404);
    await click(page, "Delete service Doomed API");
    expect((await api(`/v1/services/${svcId}`)).status).toBe(200);
    await checkPage(page, "service-delete-confirm");
    await click(page, "Delete service Doomed API");
    expect((await api(`/v1/services/${svcId}`)).status).toBe(404);
    expect(await textOf(page, "main .notice.ok")).toContain("deleted");
    expectClean(problems);
    await page.close();
  });
});

describe("services and paywalls in the browser", () => {
  it("a service and a paywall created and edited in the browser are what the API returns (price 0.01 → 10000)", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/services`, { waitUntil: "load" });
    await click(page, "New service");
    await checkPage(page, "service-new");

    // First with mistakes: every one named next to its field, by its label; focus on the first.
    await page.type("#svc-baseUrl", "not a url");
    await page.click("#svc-net-base");
    await click(page, "Create service");
    expect(await focusedId(page, "svc-name")).toBe("svc-name");
    expect(await textOf(page, "#svc-name-error")).toMatch(/^Name: /);
    expect(await textOf(page, "#svc-baseUrl-error")).toMatch(/^Base URL: /);
    expect(await textOf(page, "#svc-networks-error")).toContain('Networks: "base" is not a testnet network');
    expect(
      await page.$eval("#svc-baseUrl", (el) => [el.getAttribute("aria-invalid"), el.getAttribute("aria-describedby")]),
    ).toEqual(["true", "svc-baseUrl-hint svc-baseUrl-error"]);
    await checkPage(page, "service-new-errors");

    await fill(page, "#svc-name", "Weather in the browser");
    await fill(page, "#svc-baseUrl", "https://weather.example.com/api");
    await page.click("#svc-net-base"); // untick the mainnet network
    // A new service starts on base-sepolia and tempo-testnet: keep base-sepolia only.
    expect(await page.$eval("#svc-net-base-sepolia", (el) => (el as unknown as { checked: boolean }).checked)).toBe(true);
    await page.click("#svc-net-tempo-testnet");
    // Only the chosen method's credential fields show (all of them without JavaScript, each saying its methods).
    const shownAuthFields = () =>
      inPage<string[]>(
        page,
        `() => [...document.querySelectorAll("[data-auth-for]")].filter((d) => !d.hidden).map((d) => d.querySelector("input").id)`,
      );
    expect(await shownAuthFields()).toEqual([]);
    await page.select("#svc-authMethod", "bearer");
    expect(await shownAuthFields()).toEqual(["svc-auth-bearerToken"]);
    await page.select("#svc-authMethod", "custom-header");
    expect(await shownAuthFields()).toEqual(["svc-auth-headerName", "svc-auth-headerValue"]);
    await page.select("#svc-authMethod", "bearer");
    await page.type("#svc-auth-bearerToken", "upstream-secret-1");
    await page.type("#svc-categories", "weather, forecasts");
    await click(page, "Create service");
    expect(await textOf(page, "main .notice.ok")).toContain("Service “Weather in the browser” is created");
    const list = await api("/v1/services");
    const created = (list.body.data as unknown as Record<string, unknown>[]).find((s) => s.name === "Weather in the browser")!;
    expect(created).toMatchObject({
      baseUrl: "https://weather.example.com/api",
      mode: "testnet",
      networks: ["base-sepolia"],
      authMethod: "bearer",
      authConfig: { bearerToken: "***" },
      categories: ["weather", "forecasts"],
    });
    const sealed = async () =>
      (
        await (
          await worker.db()
        )
          .prepare("SELECT auth_config FROM services WHERE id = ?")
          .bind(created.id)
          .first<{ auth_config: string }>()
      )?.auth_config;
    const storedSecret = await sealed();
    expect(await page.content()).not.toContain("upstream-secret-1");

    // Edit: the name changes; the secret field stays empty (write-only) and the stored secret is kept.
    await click(page, "Edit service Weather in the browser");
    expect(await page.$eval("#svc-auth-bearerToken", (el) => (el as unknown as { value: string }).value)).toBe("");
    await checkPage(page, "service-edit");
    await fill(page, "#svc-name", "Weather, edited");
    await click(page, "Save service");
    const fetched = await api(`/v1/services/${created.id}`);
    expect(fetched.body.data).toMatchObject({ name: "Weather, edited", authConfig: { bearerToken: "***" } });
    expect(await sealed()).toBe(storedSecret);

    // A paywall in it: price typed in USDC.
    await click(page, "New paywall in Weather, edited");
    expect(await page.$eval("#pw-serviceId", (el) => (el as unknown as { value: string }).value)).toBe(created.id);
    await checkPage(page, "paywall-new");
    await page.type("#pw-slug", "forecast-browser");
    await page.type("#pw-name", "Forecast (browser)");
    await page.type("#pw-price", "0.01");
    await page.type("#pw-targetRoute", "/v1/forecast");
    // Opened from the service: its network is ticked already.
    expect(await page.$eval("#pw-net-base-sepolia", (el) => (el as unknown as { checked: boolean }).checked)).toBe(true);
    await page.click("#pw-method-POST");
    await click(page, "Create paywall");
    expect(await textOf(page, "main .notice.ok")).toContain("Paywall “Forecast (browser)” is created");
    const paywalls = (await api(`/v1/paywalls?serviceId=${created.id}`)).body.data as unknown as Record<string, unknown>[];
    expect(paywalls).toHaveLength(1);
    expect(paywalls[0]).toMatchObject({
      slug: "forecast-browser",
      name: "Forecast (browser)",
      price: "10000",
      currency: "USDC",
      targetType: "ROUTE",
      targetRoute: "/v1/forecast",
      networks: ["base-sepolia"],
      allowedMethods: ["GET", "POST"],
      enabled: true,
    });
    const pwId = paywalls[0]!.id as string;
    // Its payment URL is on the page, with a copy button.
    expect(await textOf(page, `#url-x402-${pwId}`)).toBe(`${worker.paymentUrl}/api/x402/pay/${created.id}/forecast-browser`);

    // Edit: a price with too many decimals is refused by name, then 0.25 is saved as 250000.
    await click(page, "Edit paywall Forecast (browser)");
    expect(await page.$eval("#pw-price", (el) => (el as unknown as { value: string }).value)).toBe("0.01");
    await checkPage(page, "paywall-edit");
    await fill(page, "#pw-price", "0.0000001");
    await click(page, "Save paywall");
    expect(await textOf(page, "#pw-price-error")).toMatch(/^Price \(USDC\): Must be a decimal amount/);
    expect(await focusedId(page, "pw-price")).toBe("pw-price");
    await checkPage(page, "paywall-edit-errors");
    await fill(page, "#pw-price", "0.25");
    await click(page, "Save paywall");
    expect((await api(`/v1/paywalls/${pwId}`)).body.data.price).toBe("250000");

    // An edit made elsewhere meanwhile is not overwritten (If-Match on the version the form was opened at).
    await click(page, "Edit paywall Forecast (browser)");
    await api(`/v1/paywalls/${pwId}`, { method: "PATCH", body: JSON.stringify({ name: "Renamed by the API" }) });
    await fill(page, "#pw-price", "0.5");
    await click(page, "Save paywall");
    expect(await textOf(page, "main .notice.error")).toContain("was changed elsewhere since you opened this form");
    expect((await api(`/v1/paywalls/${pwId}`)).body.data).toMatchObject({ name: "Renamed by the API", price: "250000" });
    expectClean(problems);
    await page.close();
  });
});

describe("forms that start ready, cache rules and schemas", () => {
  it("a paywall made from a service's page with only a slug, a name and a price gets the service's networks and a route", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    const service = await api("/v1/services", {
      method: "POST",
      body: JSON.stringify({
        name: "Quotes",
        baseUrl: "https://quotes.example.com",
        authMethod: "none",
        networks: ["base-sepolia", "arc-testnet"],
        mode: "testnet",
      }),
    });
    expect(service.status).toBe(201);
    const serviceId = service.body.data.id as string;
    await page.goto(`${worker.url}/dashboard/services`, { waitUntil: "load" });
    await click(page, "New paywall in Quotes");
    await page.type("#pw-slug", "daily-quote");
    await page.type("#pw-name", "Daily quote");
    await page.type("#pw-price", "0.0015");
    await click(page, "Create paywall");
    expect(new URL(page.url()).searchParams.get("done")).toBe("paywall-created");
    const id = new URL(page.url()).searchParams.get("id") as string;
    expect((await api(`/v1/paywalls/${id}`)).body.data).toMatchObject({
      serviceId,
      targetType: "ROUTE",
      targetRoute: "/daily-quote",
      price: "1500",
    });
    expect(((await api(`/v1/paywalls/${id}`)).body.data.networks as string[]).sort()).toEqual(["arc-testnet", "base-sepolia"]);
    // The list says the price as it is: 0.0015, not 0.001500.
    expect(await textOf(page, `#pw-${id} dd`)).toBe("0.0015 USDC");

    // With JavaScript, choosing the service in the general form does the same.
    await page.goto(`${worker.url}/dashboard/paywalls/new`, { waitUntil: "load" });
    const checked = (selector: string) =>
      page.$$eval(selector, (els) => els.filter((e) => (e as unknown as { checked: boolean }).checked).map((e) => e.id));
    expect(await checked("input[name=targetType]")).toEqual(["pw-targetType-PROXY"]);
    await page.select("#pw-serviceId", serviceId);
    expect(await checked("input[name=targetType]")).toEqual(["pw-targetType-ROUTE"]);
    expect(await checked("input[name=networks]")).toEqual(["pw-net-arc-testnet", "pw-net-base-sepolia"]);
    expectClean(problems);
    await page.close();
  });

  it("cache rules and schemas set in the paywall form are what the API returns; a bad one is named at its field", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    const paywall = (await (
      await worker.db()
    )
      .prepare("SELECT id FROM paywalls WHERE tenant_id = ? AND service_id IS NOT NULL LIMIT 1")
      .bind(worker.tenantId)
      .first<{ id: string }>()) as { id: string };
    await page.goto(`${worker.url}/dashboard/paywalls/${paywall.id}/edit`, { waitUntil: "load" });
    await fill(page, "#pw-cacheTtlSeconds", "120");
    await fill(page, "#pw-cacheVaryQuery", "city, days");
    await fill(page, "#pw-inputSchema", '{"type": "object", "properties": {"city": {"type": "string"}}');
    await fill(page, "#pw-outputSchema", '{"type": "object", "properties": {"tempC": {"type": "number"}}}');
    await click(page, "Save paywall");
    expect(await textOf(page, "#pw-inputSchema-error")).toContain("Input schema (JSON): Not valid JSON");
    expect(await focusedId(page, "pw-inputSchema")).toBe("pw-inputSchema");
    await checkPage(page, "paywall-edit-errors");
    await fill(page, "#pw-inputSchema", '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}');
    await click(page, "Save paywall");
    expect(new URL(page.url()).searchParams.get("done")).toBe("paywall-saved");
    expect((await api(`/v1/paywalls/${paywall.id}`)).body.data).toMatchObject({
      cacheRules: { ttlSeconds: 120, varyQuery: ["city", "days"] },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      outputSchema: { type: "object", properties: { tempC: { type: "number" } } },
    });
    expectClean(problems);
    await page.close();
  });

  it("the webhook delivery log fits its card at 1280 px, the Retry button in view", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    const endpoint = await api("/v1/webhook-endpoints", {
      method: "POST",
      body: JSON.stringify({ url: "https://hooks.example.com/log", events: ["transaction.completed"] }),
    });
    const endpointId = endpoint.body.data.id as string;
    await page.goto(`${worker.url}/dashboard/webhooks/${endpointId}`, { waitUntil: "load" });
    await click(page, "Send test event");
    await click(page, "Send test event");
    // One delivery given up on, with its error and the id a transaction's delivery has (its longest): a Retry button.
    await (await worker.db())
      .prepare(
        "UPDATE webhook_deliveries SET id = ?, status = 'failed', attempts = 8, response_status = 503, latency_ms = 1234, error = 'Upstream answered 503 Service Unavailable after 8 attempts' WHERE id = (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? LIMIT 1)",
      )
      .bind(`msg_4c2934642a77155071b63d2e_completed_${endpointId}`, endpointId)
      .run();
    await page.goto(`${worker.url}/dashboard/webhooks/${endpointId}`, { waitUntil: "load" });
    const region = (await page.$eval("section[aria-label='Delivery log, table']", (el) => ({
      scroll: el.scrollWidth,
      client: el.clientWidth,
    }))) as { scroll: number; client: number };
    expect(region.scroll).toBeLessThanOrEqual(region.client);
    const retry = await control(page, "Retry");
    const box = await retry.boundingBox();
    const card = await page.$eval("section[aria-labelledby='log-heading']", (el) => el.getBoundingClientRect().right);
    expect(box && box.x + box.width).toBeLessThanOrEqual(card);
    await checkPage(page, "webhook-deliveries");
    expectClean(problems);
    await page.close();
  });
});

describe("keyboard and accessibility", () => {
  it("a keyboard-only walk creates a key: skip link, the create form before the table, a preset, the button", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    const focused = () => inPage<string>(page, "() => document.activeElement.id || document.activeElement.textContent.trim()");
    /** Presses Tab until `id` has focus; the number of presses. */
    async function tabTo(id: string, max = 30) {
      for (let i = 1; i <= max; i++) {
        await page.keyboard.press("Tab");
        if ((await inPage<string>(page, "() => document.activeElement.id")) === id) return i;
      }
      throw new Error(`${id} not reached in ${max} Tabs (at ${await focused()})`);
    }
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("Skip to content");
    // The focus ring is visible: at least 3:1 against the page behind it.
    const ring = await inPage<string>(page, "() => getComputedStyle(document.activeElement).outlineColor");
    expect(ring).toBe("rgb(11, 61, 145)");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    expect(await inPage<string>(page, "() => document.activeElement.tagName")).toBe("SUMMARY");
    await page.keyboard.press("Enter");
    expect(await tabTo("new-name", 3)).toBe(1);
    await page.keyboard.type("keyboard only");
    // Into the preset radios (on the checked one, Read-only, the default), down to Full access and back with the arrows.
    expect(await tabTo("new-preset-read-only", 3)).toBe(1);
    await page.keyboard.press("ArrowDown");
    expect(await inPage<string>(page, "() => document.querySelector('input[name=preset]:checked').value")).toBe("full");
    await page.keyboard.press("ArrowUp");
    expect(await inPage<string>(page, "() => document.querySelector('input[name=preset]:checked').value")).toBe("read-only");
    let found = false;
    for (let i = 0; i < 20 && !found; i++) {
      await page.keyboard.press("Tab");
      found = (await inPage<string>(page, "() => document.activeElement.textContent.trim()")) === "Create key";
    }
    expect(found).toBe(true);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
    expect(await textOf(page, "#new-key")).toMatch(/^mpk_[0-9a-f]{64}$/);
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE name = 'keyboard only'")).toBe(1);
    expectClean(problems);
    await page.close();
  });

  it("axe-core finds no violation on any page at 1280 px and 390 px; every page is saved at both widths", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    // Signed out (the browser still holds the earlier tests' session): the sign-in page itself, not the keys page.
    await page.deleteCookie(...(await page.cookies(worker.url)));
    await page.goto(`${worker.url}/dashboard/sign-in`, { waitUntil: "load" });
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await checkPage(page, "sign-in");
    const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
    await page.goto(link.url, { waitUntil: "load" });
    await checkPage(page, "sign-in-link");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("main form button[type=submit]")]);
    const anyKey = await (await worker.db())
      .prepare("SELECT id FROM api_keys WHERE tenant_id = ? AND status != 'revoked' LIMIT 1")
      .bind(worker.tenantId)
      .first<{ id: string }>();
    const anyPaywall = await (await worker.db())
      .prepare("SELECT id, service_id FROM paywalls WHERE tenant_id = ? LIMIT 1")
      .bind(worker.tenantId)
      .first<{ id: string; service_id: string }>();
    const endpoint = await api("/v1/webhook-endpoints", {
      method: "POST",
      body: JSON.stringify({
        url: "https://hooks.example.com/paywall",
        events: ["transaction.completed"],
        description: "Orders",
      }),
    });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.body.data.id as string;
    for (const [name, path] of [
      ["keys", "/dashboard/keys"],
      ["key-edit", `/dashboard/keys/${anyKey!.id}/edit`],
      ["key-roll", `/dashboard/keys/${anyKey!.id}/roll`],
      ["key-delete-confirm", `/dashboard/keys/${anyKey!.id}/delete`],
      ["activity", "/dashboard/activity"],
      ["services", "/dashboard/services"],
      ["discovery", `/dashboard/services/${anyPaywall!.service_id}/discovery`],
      ["paywall-delete-confirm", `/dashboard/paywalls/${anyPaywall!.id}/delete`],
      ["earnings", "/dashboard/earnings"],
      ["earnings-filtered", "/dashboard/earnings?protocol=mpp&status=COMPLETED"],
      ["earnings-bad-filter", "/dashboard/earnings?from=2026-11-10&to=2026-11-01"],
      ["webhooks", "/dashboard/webhooks"],
      ["webhook-endpoint", `/dashboard/webhooks/${endpointId}`],
      ["webhook-delete-confirm", `/dashboard/webhooks/${endpointId}/delete`],
      ["profile", "/dashboard/profile"],
      ["service-new", "/dashboard/services/new"],
      ["service-edit", `/dashboard/services/${anyPaywall!.service_id}/edit`],
      ["service-delete-confirm", `/dashboard/services/${anyPaywall!.service_id}/delete`],
      ["paywall-new", "/dashboard/paywalls/new"],
      ["paywall-new-for-service", `/dashboard/paywalls/new?service=${anyPaywall!.service_id}`],
      ["paywall-edit", `/dashboard/paywalls/${anyPaywall!.id}/edit`],
      ["paywall-disable-confirm", `/dashboard/paywalls/${anyPaywall!.id}/disable`],
      ["key-revoke-confirm", `/dashboard/keys/${anyKey!.id}/revoke`],
      ["not-found", "/dashboard/no-such-page"],
      ["forbidden", "/dashboard/keys/key_doesnotexist/edit"],
    ] as const) {
      await page.goto(`${worker.url}${path}`, { waitUntil: "load" });
      await checkPage(page, name);
    }
    // The create form with errors, opened.
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    await page.click("#create-heading");
    await page.type("#new-ips", "10.0.0.300\n192.168.1.1/40\n10.0.0.1");
    await click(page, "Create key");
    const ipErrors = await textOf(page, "#new-ips-error");
    expect(ipErrors).toContain("IP allowlist:");
    expect(ipErrors).toContain("10.0.0.300");
    expect(ipErrors).toContain("192.168.1.1/40");
    expect(await focusedId(page, "new-name")).toBe("new-name");
    await checkPage(page, "keys-errors");
    // The key edit form with errors.
    await page.goto(`${worker.url}/dashboard/keys/${anyKey!.id}/edit`, { waitUntil: "load" });
    await fill(page, "#edit-ips", "10.0.0.300");
    await click(page, "Save key");
    expect(await textOf(page, "#edit-ips-error")).toContain("10.0.0.300");
    await checkPage(page, "key-edit-errors");
    // A webhook endpoint made by form: its signing secret, shown once.
    await page.goto(`${worker.url}/dashboard/webhooks`, { waitUntil: "load" });
    await page.type("#new-url", "https://hooks.example.com/second");
    // Every payment event is ticked already.
    expect(await page.$eval("#new-event-transaction-completed", (el) => (el as unknown as { checked: boolean }).checked)).toBe(
      true,
    );
    await click(page, "Create endpoint");
    expect(await textOf(page, "#new-secret")).toMatch(/^whsec_/);
    await checkPage(page, "webhooks-created");
    // Without JavaScript the wallet form says so, and posting it anyway gives a page, not JSON.
    await page.setJavaScriptEnabled(false);
    await page.goto(`${worker.url}/dashboard/profile`, { waitUntil: "load" });
    expect(await textOf(page, "main")).toContain("Signing with a wallet needs JavaScript");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click('form[data-siwe] button[type="submit"]')]);
    expect(await page.evaluate("document.contentType")).toBe("text/html");
    expect(await textOf(page, "h1")).toBe("A wallet signature needs JavaScript");
    await page.setJavaScriptEnabled(true);
    await checkPage(page, "wallet-needs-javascript");
    // Signed out: the notice.
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    await click(page, "Sign out", "header");
    expect(await textOf(page, "main .notice.ok")).toBe("You are signed out.");
    await checkPage(page, "signed-out");
    // Past the per-address limit on what anyone can post before signing in: the dashboard's own 429 page.
    // The window starts at the address's first request, earlier in this walk: a burst that straddles its reset is
    // counted partly in a fresh window, so a second burst (which cannot straddle another) is sent when needed.
    const burst = () =>
      Promise.all(
        Array.from({ length: 130 }, () =>
          fetch(`${worker.url}/dashboard/sign-in/link`, {
            method: "POST",
            redirect: "manual",
            headers: { origin: worker.url, "content-type": "application/x-www-form-urlencoded" },
            body: "token=nothing",
          }).then((r) => r.status),
        ),
      );
    let posts = await burst();
    if (!posts.includes(429)) posts = await burst();
    expect(posts).toContain(429);
    const limited = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
    await page.goto(limited.url, { waitUntil: "load" });
    const [answer] = await Promise.all([
      page.waitForNavigation({ waitUntil: "load" }),
      page.click("main form button[type=submit]"),
    ]);
    expect(answer?.status()).toBe(429);
    expect(answer?.headers()["retry-after"]).toMatch(/^\d+$/);
    await checkPage(page, "too-many-requests");
    expectClean(problems);
    await page.close();
  }, 300_000);
});
