// The services and earnings pages in a real headless Chromium against the production bundle (Miniflare, real
// socket), over demo data written through the ingestion code: the charts render from the roll-ups and agree with
// the raw records, the copy button copies a payment URL, the toggle works by keyboard, and both pages fit 375 px.
// Screenshots (desktop and 375 px) go to test-output/screenshots/.
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { formatUsdcAmount } from "../../src/core/money/usdc.ts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { findTenantById } from "../../src/db/tenants.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { DESKTOP, launchBrowser, openPage, PHONE, screenshot } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;
let paywalls: string[];

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8857 }), launchBrowser()]);
  await browser
    .defaultBrowserContext()
    .overridePermissions(worker.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  const db = getDb(await worker.db());
  const tenant = await findTenantById(db, worker.tenantId);
  if (!tenant) throw new Error("no demo tenant");
  ({ paywalls } = await writeDemoData(db, tenant, 300));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const inPage = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`(${fn})()`) as Promise<T>;

async function signIn(page: Page) {
  const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
  await page.goto(link.url, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("main form button[type=submit]")]);
}

/** Completed USDC revenue of the last 30 days (the chart's token: the demo earns most in it), from the raw rows. */
async function rawRevenue(): Promise<bigint> {
  const since = Date.parse(`${lastUtcDays(new Date(), 30)[0]}T00:00:00Z`);
  const rows = await (await worker.db())
    .prepare(
      "SELECT amount FROM transactions WHERE tenant_id = ? AND status = 'COMPLETED' AND currency = 'USDC' AND created_at >= ?",
    )
    .bind(worker.tenantId, since)
    .all<{ amount: string }>();
  return rows.results.reduce((sum, r) => sum + BigInt(r.amount), 0n);
}

async function fitsPhone(page: Page, name: string) {
  await page.setViewport(PHONE);
  await page.reload({ waitUntil: "load" });
  expect(
    await inPage<number>(page, "() => document.documentElement.scrollWidth"),
    `${name} at ${PHONE.width} px`,
  ).toBeLessThanOrEqual(PHONE.width);
  await screenshot(page, `${name}-${PHONE.width}`);
  await page.setViewport(DESKTOP);
}

describe("earnings and services pages in a browser", () => {
  it("earnings: two charts drawn from demo data, with the exact revenue, readable on a phone", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/earnings`, { waitUntil: "load" });
    const charts = await inPage<{ label: string; width: number; height: number }[]>(
      page,
      `() => [...document.querySelectorAll("svg[role=img]")].map((svg) => {
        const box = svg.getBoundingClientRect();
        return { label: document.getElementById(svg.getAttribute("aria-labelledby")).textContent, width: box.width, height: box.height };
      })`,
    );
    expect(charts.map((c) => c.label)).toEqual([
      "Revenue per day (completed transactions, USDC)",
      "Requests, successes and errors per day",
    ]);
    for (const c of charts) {
      expect(c.width).toBeGreaterThan(300);
      expect(c.height).toBeGreaterThan(100);
    }
    // The demo week: drawn bars of real height, the three lines, the exact total in the summary.
    const bars = await inPage<number[]>(
      page,
      `() => [...document.querySelectorAll("rect.bar")].map((r) => r.getBoundingClientRect().height)`,
    );
    expect(bars.length).toBeGreaterThanOrEqual(5);
    expect(bars.every((h) => h >= 1)).toBe(true);
    expect(await inPage<number>(page, `() => document.querySelectorAll("polyline").length`)).toBe(3);
    const summary = await page.$eval("#revenue-chart-summary", (el) => (el as unknown as { textContent: string }).textContent);
    expect(summary).toContain(`Total ${formatUsdcAmount(await rawRevenue())} USDC`);
    // The table alternative opens by keyboard.
    await page.focus("#revenue-chart summary");
    await page.keyboard.press("Enter");
    expect(await inPage<number>(page, `() => document.querySelectorAll("#revenue-chart details[open] tbody tr").length`)).toBe(
      30,
    );
    await screenshot(page, "earnings");
    // A filter by paywall, submitted from the form.
    await page.select("#f-paywall", paywalls[0]!);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(".filters button[type=submit]")]);
    expect(new URL(page.url()).searchParams.get("paywall")).toBe(paywalls[0]);
    expect(await page.$eval("#charts-title + p", (el) => (el as unknown as { textContent: string }).textContent)).toContain(
      "for paywall",
    );
    await page.goto(`${worker.url}/dashboard/earnings`, { waitUntil: "load" });
    await fitsPhone(page, "earnings");
    // On a phone the charts' words stay legible (at least 11 px as drawn) and none covers another.
    await page.setViewport(PHONE);
    await page.reload({ waitUntil: "load" });
    const words = await inPage<{ text: string; size: number; box: [number, number, number, number] }[]>(
      page,
      `() => [...document.querySelectorAll("svg[role=img] text")].map((t) => {
        const r = t.getBoundingClientRect();
        const svg = t.ownerSVGElement;
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return { text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * scale, box: [r.left, r.top, r.right, r.bottom] };
      })`,
    );
    await page.setViewport(DESKTOP);
    expect(words.length).toBeGreaterThan(10);
    for (const w of words) expect(w.size, `"${w.text}" at ${PHONE.width} px`).toBeGreaterThanOrEqual(11);
    const overlap = (a: number[], b: number[]) =>
      a[0]! < b[2]! - 0.5 && b[0]! < a[2]! - 0.5 && a[1]! < b[3]! - 0.5 && b[1]! < a[3]! - 0.5;
    for (const [i, a] of words.entries())
      for (const b of words.slice(i + 1)) expect(overlap(a.box, b.box), `"${a.text}" covers "${b.text}"`).toBe(false);
    expect(problems.errors).toEqual([]);
    expect(problems.foreign).toEqual([]);
  });

  it("services: copy a payment URL, disable and enable a paywall by keyboard, readable on a phone", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/services`, { waitUntil: "load" });
    await screenshot(page, "services");
    const url = await page.$eval(`#url-x402-${paywalls[0]}`, (el) => (el as unknown as { textContent: string }).textContent);
    await page.click(`button[data-copy="#url-x402-${paywalls[0]}"]`);
    expect(await inPage<string>(page, "() => navigator.clipboard.readText()")).toBe(url);
    // Announced to screen readers through the page's live region, naming what was copied.
    await page.waitForFunction(
      `document.querySelector("#copy-status").textContent.startsWith("Copied the x402 payment URL of")`,
      {
        timeout: 3000,
      },
    );
    expect(await page.$eval("#copy-status", (el) => [el.getAttribute("role"), el.getAttribute("aria-live")])).toEqual([
      "status",
      "polite",
    ]);

    // Disable asks first (its own page); Enable is one step.
    await page.focus(`#pw-${paywalls[0]} .paywall-head a.button`);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/paywalls/${paywalls[0]}/disable`);
    await page.focus("main form button[type=submit]");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
    expect(await page.$eval(`#pw-${paywalls[0]} .status`, (el) => (el as unknown as { textContent: string }).textContent)).toBe(
      "Disabled",
    );
    expect(await page.$eval(".notice.ok", (el) => (el as unknown as { textContent: string }).textContent)).toContain(
      "is disabled",
    );
    await page.focus(`#pw-${paywalls[0]} .paywall-head form button`);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
    expect(await page.$eval(`#pw-${paywalls[0]} .status`, (el) => (el as unknown as { textContent: string }).textContent)).toBe(
      "Enabled",
    );
    await fitsPhone(page, "services");
    expect(problems.errors).toEqual([]);
    expect(problems.foreign).toEqual([]);
  });
});
