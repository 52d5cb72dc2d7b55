// /docs in a real headless Chromium: the static reference page, served by Workers static assets next to the Worker,
// renders every operation of /openapi.json readably and offline.
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/core/http/errors.ts";
import { checkPage } from "./support/axe.ts";
import { DESKTOP, launchBrowser, openPage, type PageProblems, PHONE, screenshot } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;
let doc: { paths: Record<string, Record<string, { summary?: string }>> };

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8842 }), launchBrowser()]);
  doc = await (await fetch(`${worker.url}/openapi.json`)).json();
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const OPERATIONS = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map((method) => ({ method, path })),
  );

/** Evaluates a function written as text in the page (the project's types have no DOM; the page has one). */
const inPage = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`(${fn})()`) as Promise<T>;

async function load(viewport = DESKTOP): Promise<{ page: Page; problems: PageProblems }> {
  const opened = await openPage(browser, worker.url, viewport);
  const res = await opened.page.goto(`${worker.url}/docs`, { waitUntil: "networkidle0" });
  expect([200, 304]).toContain(res?.status()); // 304: the browser revalidates its cached copy
  await opened.page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
  return opened;
}

describe("GET /docs in a browser", () => {
  it("renders every operation of /openapi.json, with no script error and no request leaving the origin", async () => {
    const { page, problems } = await load();
    const rendered = await inPage<string[]>(
      page,
      `() => [...document.querySelectorAll("section.operation h3")].map((h) => h.textContent.replace(/\\s+/g, " ").trim())`,
    );
    expect(rendered.sort()).toEqual(
      OPERATIONS()
        .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
        .sort(),
    );
    expect(problems).toEqual({ errors: [], foreign: [], failed: [] });
    await screenshot(page, "docs-desktop");
    await page.close();
  });

  it("shows Markdown rendered, never as literal backticks or asterisks", async () => {
    const { page } = await load();
    // Prose outside code: code may hold asterisks ("***" is how secrets come back).
    const text = await inPage<string>(
      page,
      `() => [...document.querySelectorAll("main p, main li, main td, main h3, main summary")].map((e) => {
        const copy = e.cloneNode(true);
        copy.querySelectorAll("code, pre").forEach((c) => c.remove());
        return copy.textContent;
      }).join("\\n")`,
    );
    expect(text.length).toBeGreaterThan(3000);
    expect(text).not.toMatch(/`/);
    expect(text).not.toMatch(/\*\*/);
    expect(await page.$$eval("section.operation .prose code", (c) => c.length)).toBeGreaterThan(5);
    await page.close();
  });

  it("has an authentication section and an error table holding every code with its status", async () => {
    const { page } = await load();
    const auth = await inPage<string>(page, `() => document.querySelector("#authentication").innerText`);
    for (const phrase of ["Authorization: Bearer", "X-Api-Key", "Never put a key in the URL", "Scopes"])
      expect(auth).toContain(phrase);
    const rows = await inPage<string[][]>(
      page,
      `() => [...document.querySelectorAll("#error-codes tbody tr")].map((tr) => [...tr.querySelectorAll("td")].slice(0, 2).map((td) => td.textContent.trim()))`,
    );
    const table = Object.fromEntries(rows.map(([code, status]) => [code, status]));
    expect(Object.keys(table).sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    for (const [code, status] of Object.entries(ERROR_STATUS)) expect(table[code], code).toContain(String(status));
    await page.close();
  });

  it("gives each operation a curl sample (with the key unless it needs none), examples and readable field tables", async () => {
    const { page } = await load();
    const ops = await inPage<
      { title: string; curl: string | undefined; examples: string[]; fieldTables: number; rawSchema: boolean }[]
    >(
      page,
      `() => [...document.querySelectorAll("section.operation")].map((s) => {
        const box = (label) => [...s.querySelectorAll(".codebox")].find((b) => b.querySelector(".codebar span").textContent === label);
        return {
          title: s.querySelector("h3").textContent.replace(/\\s+/g, " ").trim(),
          curl: box("curl")?.querySelector("code").textContent,
          examples: [...s.querySelectorAll(".codebar span")].map((x) => x.textContent),
          fieldTables: s.querySelectorAll("table.fields").length,
          rawSchema: /"\\$ref"|"type":\\s*"object"|"properties"\\s*:/.test(s.textContent),
        };
      })`,
    );
    for (const op of ops) {
      const [method, path] = op.title.split(" ") as [string, string];
      expect(op.curl, op.title).toMatch(/^curl -s/);
      expect(op.curl, op.title).toContain(`$API${path.replace(/\{(\w+)\}/g, (_, n: string) => `$${n.toUpperCase()}`)}`);
      if (method !== "GET") expect(op.curl, op.title).toContain(`-X ${method}`);
      expect(op.curl?.includes("Authorization: Bearer $KEY"), op.title).toBe(path !== "/v1/health");
      expect(op.examples, op.title).toContain("Example response");
      // Actions without a body (send a test event, retry a delivery) have no request body to show.
      if ((method === "POST" || method === "PATCH") && !/\/(test|retry)$/.test(path)) {
        expect(op.examples, op.title).toContain("Example request body");
        expect(op.curl, op.title).toContain("Content-Type: application/json");
        expect(op.fieldTables, op.title).toBeGreaterThan(0);
      }
      expect(op.rawSchema, op.title).toBe(false);
    }
    await page.close();
  });

  it("Chromium reads the catalog pages the API sends it compressed: the same JSON as uncompressed", async () => {
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await fetch(`${worker.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${worker.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { data: { id: string } }).data;
    };
    for (const name of ["Weather", "Tides", "Pollen"]) {
      const service = await post("/v1/services", {
        name,
        baseUrl: "https://api.weather.example.com",
        authMethod: "none",
        authConfig: {},
        networks: ["base-sepolia"],
        mode: "testnet",
      });
      await post("/v1/paywalls", {
        slug: name.toLowerCase(),
        name: `${name} forecast`,
        targetType: "ROUTE",
        targetRoute: "/v1/forecast",
        serviceId: service.id,
        price: "10000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      });
    }
    const { page } = await load();
    const encodings: Record<string, string | undefined> = {};
    page.on("response", (res) => {
      if (res.url().includes("/v1/")) encodings[new URL(res.url()).pathname] = res.headers()["content-encoding"];
    });
    for (const path of ["/v1/services?limit=20", "/v1/paywalls?limit=100"]) {
      const inBrowser = await inPage<{ data: unknown[]; meta: { pagination: unknown } }>(
        page,
        `() => fetch(${JSON.stringify(path)}, { headers: { authorization: "Bearer ${worker.key}" } }).then((r) => r.json())`,
      );
      const plain = await fetch(`${worker.url}${path}`, {
        headers: { authorization: `Bearer ${worker.key}`, "accept-encoding": "identity" },
      });
      expect(plain.headers.get("content-encoding")).toBeNull();
      const expected = (await plain.json()) as typeof inBrowser;
      expect(inBrowser.data.length).toBeGreaterThanOrEqual(3);
      expect(inBrowser.data).toEqual(expected.data);
      expect(inBrowser.meta.pagination).toEqual(expected.meta.pagination);
      expect(encodings[new URL(path, worker.url).pathname], path).toBe("gzip");
    }
    await page.close();
  });

  it("the curl sample of POST /v1/services sends a body that the API accepts", async () => {
    const { page } = await load();
    const body = await inPage<string | undefined>(
      page,
      `() => [...document.querySelectorAll("#post-v1-services .codebox")].find((b) => b.querySelector(".codebar span").textContent === "Example request body")?.querySelector("code").textContent`,
    );
    const res = await fetch(`${worker.url}/v1/services`, {
      method: "POST",
      headers: { authorization: `Bearer ${worker.key}`, "content-type": "application/json" },
      body: body ?? "",
    });
    expect({ status: res.status, body: res.status === 201 ? "" : await res.text() }).toEqual({ status: 201, body: "" });
    await page.close();
  });

  it("fits a 375 px wide phone without sideways scrolling of the page", async () => {
    const { page, problems } = await load(PHONE);
    // A phone widens its layout viewport to fit wide content, so compare with the width that was asked for.
    const overflow = await inPage<number>(page, `() => document.documentElement.scrollWidth - ${PHONE.width}`);
    expect(overflow).toBeLessThanOrEqual(0);
    // The contents collapse above the reference, which gets the full width.
    const layout = await inPage<{ mainWidth: number; viewport: number; navAbove: boolean }>(
      page,
      `() => ({
        mainWidth: document.querySelector("main").getBoundingClientRect().width,
        viewport: ${PHONE.width},
        navAbove: document.querySelector("nav").getBoundingClientRect().bottom <= document.querySelector("main").getBoundingClientRect().top,
      })`,
    );
    expect(layout.mainWidth).toBeGreaterThanOrEqual(layout.viewport * 0.95);
    expect(layout.navAbove).toBe(true);
    expect(problems.errors).toEqual([]);
    await screenshot(page, "docs-phone");
    await page.close();
  });

  it("axe-core finds no violation at 1280 px and at 390 px: every scrolling code block and table takes focus", async () => {
    const { page, problems } = await openPage(browser, worker.url, DESKTOP);
    // axe needs its script in the page, which the page's CSP would refuse.
    await page.setBypassCSP(true);
    await page.goto(`${worker.url}/docs`, { waitUntil: "networkidle0" });
    await page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
    await checkPage(page, "docs");
    // What scrolls sideways says what it is and can be scrolled from the keyboard; what does not, takes no tab stop.
    const regions = await inPage<{ scrolls: boolean; tab: string | null; label: string | null }[]>(
      page,
      `() => [...document.querySelectorAll("pre.code, .scroll")].map((el) => ({ scrolls: el.scrollWidth > el.clientWidth, tab: el.getAttribute("tabindex"), label: el.getAttribute("aria-label") }))`,
    );
    expect(regions.filter((r) => r.scrolls && (r.tab !== "0" || !r.label))).toEqual([]);
    expect(regions.filter((r) => !r.scrolls && r.tab !== null)).toEqual([]);
    expect(problems.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("is served with a Content-Security-Policy that allows nothing from another origin", async () => {
    const res = await fetch(`${worker.url}/docs`);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
  });

  it("leaves the API's own paths to the Worker", async () => {
    expect((await fetch(`${worker.url}/openapi.json`)).headers.get("content-type")).toMatch(/^application\/json/);
    expect((await fetch(`${worker.url}/v1/health`)).status).toBe(200);
    const me = await fetch(`${worker.url}/v1/me`);
    expect(me.status).toBe(401);
    expect((await fetch(`${worker.url}/dashboard`)).headers.get("x-request-id")).toMatch(/^req_/);
  });
});
