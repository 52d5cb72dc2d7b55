// The earnings page's sessions summary in a real headless Chromium against the production bundle (Miniflare, real
// socket): channels written through the records consumer's writer (`applyPaymentRecords`), the figures shown equal to
// the raw rows summed exactly, another tenant's channels not counted, readable at 1280 and 390 px. Screenshots go to
// test-output/screenshots/ (sessions-earnings-1280.png, sessions-earnings-390.png); axe-core finds no violation.
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { formatUsdcAmount } from "../../src/core/money/usdc.ts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { applyPaymentRecords } from "../../src/db/ledger.ts";
import type { NewChannel } from "../../src/db/schema.ts";
import { findTenantById, insertTenant } from "../../src/db/tenants.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { checkPage } from "./support/axe.ts";
import { DESKTOP, launchBrowser, openPage, PHONE, screenshot, scrollTo } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;

const wallet = () => `0x${randomHex(20)}`;

function channel(tenantId: string, paywallId: string, overrides: Partial<NewChannel>): NewChannel {
  return {
    id: `0x${randomHex(32)}`,
    tenantId,
    paywallId,
    serviceId: null,
    protocol: "x402",
    network: "base-sepolia",
    currency: "USDC",
    payerAddress: wallet(),
    deposit: "5000000",
    charged: "0",
    claimed: "0",
    settled: "0",
    status: "OPEN",
    seq: 1,
    openedAt: new Date(),
    lastCallAt: null,
    updatedAt: new Date(),
    ...overrides,
  };
}

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8943 }), launchBrowser()]);
  const db = getDb(await worker.db());
  const tenant = await findTenantById(db, worker.tenantId);
  if (!tenant) throw new Error("no demo tenant");
  const { paywalls } = await writeDemoData(db, tenant, 20);
  const [p1, p2] = paywalls as [string, string];
  const otherId = newId("ten");
  await insertTenant(db, { id: otherId, email: `${otherId}@example.com`, name: "Other", walletAddress: wallet() });
  const rows = [
    // Beyond 2^53 micro-USDC in sum: a float would round the totals.
    channel(worker.tenantId, p1, {
      charged: "9007199254740993",
      settled: "9007199254740000",
      claimed: "9007199254740000",
      seq: 40,
    }),
    channel(worker.tenantId, p1, { charged: "1234567", settled: "0", seq: 9 }),
    channel(worker.tenantId, p2, { charged: "750000", claimed: "750000", settled: "750000", status: "CLOSED", seq: 20 }),
    channel(worker.tenantId, p2, { network: "tempo-testnet", currency: "pathUSD", protocol: "mpp", charged: "42", seq: 3 }),
    channel(otherId, "pw_other", { charged: "999999999", seq: 5 }),
  ];
  // Channel records only: no transaction moves to guard.
  await applyPaymentRecords(
    db,
    rows.map((row) => ({ kind: "channel" as const, row })),
    [],
  );
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

async function signIn(page: Page) {
  const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
  await page.goto(link.url, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("main form button[type=submit]")]);
}

/** The tenant's channel rows summed per token in bigint: what the summary must show. */
async function expectedRows(): Promise<string[][]> {
  const { results } = await (await worker.db())
    .prepare("SELECT currency, status, charged, settled FROM channels WHERE tenant_id = ?")
    .bind(worker.tenantId)
    .all<{ currency: string; status: string; charged: string; settled: string }>();
  const per = new Map<string, { charged: bigint; open: number; unsettled: bigint }>();
  for (const r of results) {
    const t = per.get(r.currency) ?? { charged: 0n, open: 0, unsettled: 0n };
    t.charged += BigInt(r.charged);
    t.unsettled += BigInt(r.charged) - BigInt(r.settled);
    if (r.status === "OPEN") t.open++;
    per.set(r.currency, t);
  }
  return [...per]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, t]) => [currency, formatUsdcAmount(t.charged), String(t.open), formatUsdcAmount(t.unsettled)]);
}

const shownRows = (page: Page) =>
  page.$$eval("#sessions tbody tr", (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("th, td")].map((c) => (c.textContent ?? "").trim())),
  );

describe("sessions on the earnings page", () => {
  it("session revenue, open channels and what is charged but not settled equal the rows, at 1280 and 390 px", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/earnings`, { waitUntil: "load" });
    const headers = await page.$$eval("#sessions thead th", (ths) => ths.map((th) => (th.textContent ?? "").trim()));
    expect(headers).toEqual(["Token", "Session revenue", "Open channels", "Charged, not yet settled"]);
    const expected = await expectedRows();
    // By hand too: 9,007,199,254,740,993 + 1,234,567 + 750,000 micro-USDC charged, 2 open, 993 + 1,234,567 not settled.
    expect(expected).toEqual([
      ["USDC", formatUsdcAmount("9007199256725560"), "2", formatUsdcAmount("1235560")],
      ["pathUSD", "0.000042", "1", "0.000042"],
    ]);
    expect(await shownRows(page)).toEqual(expected);
    await scrollTo(page, "#sessions");
    await screenshot(page, `sessions-earnings-${DESKTOP.width}`);

    await page.setViewport(PHONE);
    await page.reload({ waitUntil: "load" });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE.width);
    expect(await shownRows(page)).toEqual(expected);
    await scrollTo(page, "#sessions");
    await screenshot(page, `sessions-earnings-${PHONE.width}`);
    expect(problems.errors).toEqual([]);
    expect(problems.foreign).toEqual([]);
  });

  it("axe-core finds no violation on the page with its sessions table, at 1280 and 390 px", async () => {
    const { page } = await openPage(browser, worker.url);
    // axe needs its script in the page: the page's CSP would refuse it (the dashboard itself loads none).
    await page.setBypassCSP(true);
    await signIn(page);
    await page.goto(`${worker.url}/dashboard/earnings`, { waitUntil: "load" });
    expect(await shownRows(page)).toHaveLength(2);
    await checkPage(page, "sessions-earnings-axe");
  });
});
