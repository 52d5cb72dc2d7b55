// The earnings and traffic page through the real Worker, over demo data: the 30-day charts agree with the raw
// records, the lists apply the API's filters and paging, and another tenant's records never show.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { formatUsdc } from "../../src/core/money/usdc.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { createPaywallFor } from "../history/support.ts";
import { createTenant, db } from "../support/factories.ts";
import { completeRecorded, recordPayment } from "../support/payments.ts";
import { page, signIn, text } from "./insights-support.ts";

const one = async <T>(sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...params)
    .first<T>()) as T;

/** Independent totals over the raw rows (the page reads the roll-ups). */
async function rawTotals(tenantId: string, paywallId?: string) {
  const days = lastUtcDays(new Date(), 30);
  const since = Date.parse(`${days[0]}T00:00:00Z`);
  const where = `tenant_id = ? AND created_at >= ?${paywallId ? " AND paywall_id = ?" : ""}`;
  const params = paywallId ? [tenantId, since, paywallId] : [tenantId, since];
  const amounts = await env.DB.prepare(`SELECT amount FROM transactions WHERE ${where} AND status = 'COMPLETED'`)
    .bind(...params)
    .all<{ amount: string }>();
  const revenue = amounts.results.reduce((sum, r) => sum + BigInt(r.amount), 0n);
  const events = await env.DB.prepare(`SELECT event_type, count(*) AS n FROM events WHERE ${where} GROUP BY event_type`)
    .bind(...params)
    .all<{ event_type: string; n: number }>();
  const n = (type: string) => events.results.find((e) => e.event_type === type)?.n ?? 0;
  return { revenue, requests: n("REQUEST"), successes: n("SUCCESS"), errors: n("ERROR") };
}

async function demoTenant(count = 120): Promise<{ tenant: Tenant; paywalls: string[]; cookie: string }> {
  const tenant = await createTenant();
  const { paywalls } = await writeDemoData(db(), tenant, count);
  return { tenant, paywalls, cookie: await signIn(tenant) };
}

const matches = (html: string) => Number(/([\d,]+) transactions? match/.exec(text(html))?.[1]?.replaceAll(",", ""));
const transactionRows = (html: string) =>
  html
    .split('class="table-wrap" aria-labelledby="transactions-title"')[1]!
    .split("<tbody>")[1]!
    .split("</tbody>")[0]!
    .match(/<tr>/g)?.length ?? 0;

describe("earnings and traffic page", () => {
  it("charts the last 30 days from demo data: totals agree with the raw records", async () => {
    const { tenant, cookie } = await demoTenant();
    const { status, html } = await page(cookie, "/dashboard/earnings");
    expect(status).toBe(200);
    const raw = await rawTotals(tenant.id);
    expect(raw.revenue).toBeGreaterThan(0n);
    const seen = text(html);
    expect(seen).toContain(`Total ${formatUsdc(raw.revenue)} USDC from`);
    expect(seen).toContain(`${raw.requests.toLocaleString("en-US")} requests, ${raw.successes} successes, ${raw.errors} errors`);
    // Two charts with accessible names, bars for the demo week, 30 days in each table.
    expect(html.match(/<svg[^>]*role="img"/g)).toHaveLength(2);
    expect(html).toContain('<figcaption id="revenue-chart-title">Revenue per day (completed transactions, USDC)</figcaption>');
    expect(html.match(/<rect class="bar"/g)?.length).toBeGreaterThanOrEqual(5);
    expect(
      html
        .split("<details>")
        .slice(1)
        .map((d) => d.match(/<th scope="row">/g)?.length),
    ).toEqual([30, 30]);
    // The inline chart styles carry the response's CSP nonce.
    const nonce = /'nonce-([0-9a-f]+)'/.exec(
      (await page(cookie, "/dashboard/earnings")).headers.get("content-security-policy") ?? "",
    );
    expect(nonce).not.toBeNull();
    expect(html).toMatch(/<style nonce="[0-9a-f]+">/);
  });

  it("counts a settled transaction once, on the day it was made", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const cookie = await signIn(tenant);
    const recorded = await recordPayment(paywall, { network: "base-sepolia", amount: "12345678" });
    expect(text((await page(cookie, "/dashboard/earnings")).html)).toContain("Total 0.000000 USDC");
    expect(await completeRecorded(recorded)).toBe(true);
    expect(await completeRecorded(recorded)).toBe(false); // no longer PENDING: nothing moves twice
    const html = (await page(cookie, "/dashboard/earnings")).html;
    expect(text(html)).toContain("Total 12.345678 USDC");
    expect(html).toContain(`<title>${lastUtcDays(new Date(), 1)[0]}: 12.345678 USDC</title>`);
  });

  it("filters the transactions by status, network, protocol, paywall and dates like the API, with paging", async () => {
    const { tenant, paywalls, cookie } = await demoTenant(150);
    const count = async (extra: string, ...params: unknown[]) =>
      (await one<{ n: number }>(`SELECT count(*) AS n FROM transactions WHERE tenant_id = ?${extra}`, tenant.id, ...params)).n;

    const failed = await page(cookie, "/dashboard/earnings?status=FAILED");
    expect(matches(failed.html)).toBe(await count(" AND status = 'FAILED'"));
    expect(text(failed.html.split('aria-label="Transactions, table"')[1]!)).not.toMatch(/\bCOMPLETED\b|\bPENDING\b/);

    const tempoMpp = await page(cookie, "/dashboard/earnings?network=tempo-testnet&protocol=mpp");
    expect(matches(tempoMpp.html)).toBe(await count(" AND network = 'tempo-testnet' AND protocol = 'mpp'"));

    const onePaywall = await page(cookie, `/dashboard/earnings?paywall=${paywalls[0]}`);
    expect(matches(onePaywall.html)).toBe(await count(" AND paywall_id = ?", paywalls[0]));
    const raw = await rawTotals(tenant.id, paywalls[0]);
    expect(text(onePaywall.html)).toContain(`Total ${formatUsdc(raw.revenue)} USDC from`);
    expect(onePaywall.html).toMatch(new RegExp(`<option value="${paywalls[0]}" selected="">`));

    const today = lastUtcDays(new Date(), 1)[0]!;
    const todays = await page(cookie, `/dashboard/earnings?from=${today}&to=${today}`);
    expect(matches(todays.html)).toBe(await count(" AND created_at >= ?", Date.parse(`${today}T00:00:00Z`)));

    // Paging: 25 a page, newest first; the links keep the filters.
    const all = await count("");
    const first = await page(cookie, "/dashboard/earnings?status=COMPLETED");
    expect(transactionRows(first.html)).toBe(25);
    expect(first.html).toContain('href="/dashboard/earnings?status=COMPLETED&amp;tpage=2"');
    const second = await page(cookie, "/dashboard/earnings?status=COMPLETED&tpage=2");
    const firstHashes = first.html.match(/>0x[0-9a-f]{64}</g);
    const secondHashes = second.html.match(/>0x[0-9a-f]{64}</g);
    expect(secondHashes?.some((h) => firstHashes?.includes(h))).toBe(false);
    expect(all).toBe(150);
  });

  it("refuses invalid filters with a clear message", async () => {
    const { cookie } = await demoTenant(5);
    const bad = await page(cookie, "/dashboard/earnings?status=SETTLED&from=2026-11-10&to=2026-11-01&tpage=0");
    expect(bad.status).toBe(400);
    const seen = text(bad.html);
    expect(seen).toContain("These filters are not valid:");
    expect(seen).toContain("status: Invalid option");
    expect(seen).toContain("tpage:");
    const dates = await page(cookie, "/dashboard/earnings?from=2026-11-10&to=2026-11-01");
    expect(text(dates.html)).toContain("from: must not be after to");
    expect((await page(cookie, "/dashboard/earnings?from=yesterday")).status).toBe(400);
  });

  it("another tenant's paywall or service in a filter shows nothing of theirs and says so", async () => {
    const { cookie } = await demoTenant(20);
    const other = await demoTenant(40);
    const theirHashes = (
      await env.DB.prepare("SELECT tx_hash FROM transactions WHERE tenant_id = ? AND tx_hash IS NOT NULL")
        .bind(other.tenant.id)
        .all<{ tx_hash: string }>()
    ).results.map((r) => r.tx_hash);
    const theirService = (await one<{ id: string }>("SELECT id FROM services WHERE tenant_id = ?", other.tenant.id)).id;
    for (const query of [`paywall=${other.paywalls[0]}`, `service=${theirService}`]) {
      const res = await page(cookie, `/dashboard/earnings?${query}`);
      expect(res.status).toBe(404);
      const seen = text(res.html);
      expect(seen).toMatch(/None of your (paywalls|services) has this id: nothing is shown for it\./);
      expect(seen).toContain("0 transactions match");
      expect(seen).toContain("Total 0.000000 USDC");
      for (const hash of theirHashes) expect(res.html).not.toContain(hash);
    }
    // And without a filter, the page is the tenant's own.
    const own = await page(cookie, "/dashboard/earnings");
    for (const hash of theirHashes) expect(own.html).not.toContain(hash);
  });

  it("an empty account shows 30 empty days, not an error", async () => {
    const cookie = await signIn(await createTenant());
    const { status, html } = await page(cookie, "/dashboard/earnings");
    expect(status).toBe(200);
    const seen = text(html);
    expect(seen).toContain("Total 0.000000 USDC");
    expect(seen).toContain("30 of 30 days without revenue");
    expect(seen).toContain("0 transactions match");
  });
});
