// The earnings and traffic page through the real Worker, over demo data: the 30-day charts agree with the raw
// records, the lists apply the API's filters and paging, and another tenant's records never show.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { completePayment } from "../../src/core/ledger/ledger.ts";
import { formatUsdcAmount } from "../../src/core/money/usdc.ts";
import { CSV_CHUNK } from "../../src/dashboard/pages/earnings/csv.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { createPaywallFor } from "../history/support.ts";
import { printToRunner } from "../support/console.ts";
import { createTenant, db } from "../support/factories.ts";
import { insertCompletedInBulk, insertHistoricTransactions } from "../support/ledger-fixture.ts";
import { completeRecorded, recordPayment, txHash } from "../support/payments.ts";
import { page, signIn, text } from "./insights-support.ts";

const one = async <T>(sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...params)
    .first<T>()) as T;

/** Independent totals over the raw rows (the page reads the roll-ups): revenue in the token the chart draws. */
async function rawTotals(tenantId: string, paywallId?: string) {
  const days = lastUtcDays(new Date(), 30);
  const since = Date.parse(`${days[0]}T00:00:00Z`);
  const where = `tenant_id = ? AND created_at >= ?${paywallId ? " AND paywall_id = ?" : ""}`;
  const params = paywallId ? [tenantId, since, paywallId] : [tenantId, since];
  const amounts = await env.DB.prepare(`SELECT amount, currency FROM transactions WHERE ${where} AND status = 'COMPLETED'`)
    .bind(...params)
    .all<{ amount: string; currency: string }>();
  // The chart draws one token: the one that earned most over the 30 days (USDC when none did).
  const perToken = new Map<string, bigint>([["USDC", 0n]]);
  for (const r of amounts.results) perToken.set(r.currency, (perToken.get(r.currency) ?? 0n) + BigInt(r.amount));
  const [token, revenue] = [...perToken].reduce((best, next) => (next[1] > best[1] ? next : best));
  const events = await env.DB.prepare(`SELECT event_type, count(*) AS n FROM events WHERE ${where} GROUP BY event_type`)
    .bind(...params)
    .all<{ event_type: string; n: number }>();
  const n = (type: string) => events.results.find((e) => e.event_type === type)?.n ?? 0;
  return { token, revenue, requests: n("REQUEST"), successes: n("SUCCESS"), errors: n("ERROR") };
}

async function demoTenant(count = 120): Promise<{ tenant: Tenant; paywalls: string[]; cookie: string }> {
  const tenant = await createTenant();
  const { paywalls } = await writeDemoData(db(), tenant, count);
  return { tenant, paywalls, cookie: await signIn(tenant) };
}

const matches = (html: string) => Number(/([\d,]+) transactions? match/.exec(text(html))?.[1]?.replaceAll(",", ""));
const transactionRows = (html: string) =>
  html.split('aria-label="Transactions, table"')[1]!.split("<tbody>")[1]!.split("</tbody>")[0]!.match(/<tr>/g)?.length ?? 0;

describe("earnings and traffic page", () => {
  it("charts the last 30 days from demo data: totals agree with the raw records", async () => {
    const { tenant, cookie } = await demoTenant();
    const { status, html } = await page(cookie, "/dashboard/earnings");
    expect(status).toBe(200);
    const raw = await rawTotals(tenant.id);
    expect(raw.revenue).toBeGreaterThan(0n);
    const seen = text(html);
    expect(seen).toContain(`Total ${formatUsdcAmount(raw.revenue)} ${raw.token} from`);
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
    expect(text((await page(cookie, "/dashboard/earnings")).html)).toContain("Total 0.00 USDC");
    expect(await completeRecorded(recorded)).toBe(true);
    expect(await completeRecorded(recorded)).toBe(false); // no longer PENDING: nothing moves twice
    const html = (await page(cookie, "/dashboard/earnings")).html;
    expect(text(html)).toContain("Total 12.345678 USDC");
    expect(html).toContain(`<title>${lastUtcDays(new Date(), 1)[0]}: 12.345678 USDC</title>`);
  });

  it("shows the edge cache's hit ratio and the upstream calls it saved, for paywalls with cacheRules only", async () => {
    const tenant = await createTenant();
    const [cached, other] = [await createPaywallFor(tenant), await createPaywallFor(tenant)];
    const cookie = await signIn(tenant);
    expect(text((await page(cookie, "/dashboard/earnings")).html)).not.toContain("Edge cache");
    for (const cache of ["hit", "hit", "miss", undefined] as const) {
      const ref = await recordPayment(cache ? cached : other, { network: "base-sepolia" });
      await completePayment(db(), ref, txHash(), {
        statusCode: 200,
        responseTime: cache === "hit" ? null : 42,
        ...(cache ? { cache } : {}),
      });
    }
    expect(text((await page(cookie, "/dashboard/earnings")).html)).toContain(
      "Edge cache: 2 of 3 paid answers of cached paywalls came from the cache (66.7% hit ratio): 2 upstream calls saved.",
    );
    expect(text((await page(cookie, `/dashboard/earnings?paywall=${other.id}`)).html)).not.toContain("Edge cache");
  });

  it("filters the transactions by status, network, protocol, paywall and dates like the API, with paging", async () => {
    const { tenant, paywalls, cookie } = await demoTenant(150);
    const count = async (extra: string, ...params: unknown[]) =>
      (await one<{ n: number }>(`SELECT count(*) AS n FROM transactions WHERE tenant_id = ?${extra}`, tenant.id, ...params)).n;

    const failed = await page(cookie, "/dashboard/earnings?status=FAILED");
    expect(matches(failed.html)).toBe(await count(" AND status = 'FAILED'"));
    expect(text(failed.html.split('aria-label="Transactions, table" tabindex="0">')[1]!)).not.toMatch(
      /\bCOMPLETED\b|\bPENDING\b/,
    );
    // The events follow the status as the event its ledger move records: a failed payment's error.
    expect(text(failed.html)).toMatch(/events match: 0 requests, 0 successes, [1-9][\d,]* errors\./);

    const tempoMpp = await page(cookie, "/dashboard/earnings?network=tempo-testnet&protocol=mpp");
    expect(matches(tempoMpp.html)).toBe(await count(" AND network = 'tempo-testnet' AND protocol = 'mpp'"));

    const onePaywall = await page(cookie, `/dashboard/earnings?paywall=${paywalls[0]}`);
    expect(matches(onePaywall.html)).toBe(await count(" AND paywall_id = ?", paywalls[0]));
    const raw = await rawTotals(tenant.id, paywalls[0]);
    expect(text(onePaywall.html)).toContain(`Total ${formatUsdcAmount(raw.revenue)} ${raw.token} from`);
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
      expect(seen).toContain("Total 0.00 USDC");
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
    expect(seen).toContain("Total 0.00 USDC");
    expect(seen).toContain("30 of 30 days without revenue");
    expect(seen).toContain("0 transactions match");
  });
});

describe("earnings a merchant can use", () => {
  it("totals per token for today, 7, 30 and 90 days: pathUSD is never added to USDC", async () => {
    const { tenant, cookie } = await demoTenant(150);
    const { html } = await page(cookie, "/dashboard/earnings");
    const sum = async (currency: string, days: number) => {
      const since = Date.parse(`${lastUtcDays(new Date(), days)[0]}T00:00:00Z`);
      const rows = await env.DB.prepare(
        "SELECT amount FROM transactions WHERE tenant_id = ? AND status = 'COMPLETED' AND currency = ? AND created_at >= ?",
      )
        .bind(tenant.id, currency, since)
        .all<{ amount: string }>();
      return formatUsdcAmount(rows.results.reduce((s, r) => s + BigInt(r.amount), 0n));
    };
    const table = text(html.split('aria-label="Revenue per token, table" tabindex="0">')[1]!.split("</table>")[0]!);
    expect(table).toBe(
      `Token Today 7 days 30 days 90 days USDC ${await sum("USDC", 1)} ${await sum("USDC", 7)} ${await sum("USDC", 30)} ${await sum("USDC", 90)} pathUSD ${await sum("pathUSD", 1)} ${await sum("pathUSD", 7)} ${await sum("pathUSD", 30)} ${await sum("pathUSD", 90)}`,
    );
    // The network filter narrows the totals to one token.
    const base = await page(cookie, "/dashboard/earnings?network=base-sepolia");
    expect(text(base.html.split('aria-label="Revenue per token, table" tabindex="0">')[1]!.split("</table>")[0]!)).not.toContain(
      "pathUSD",
    );
  });

  it("names each amount's token in both lists: a Tempo payment's event is in pathUSD, never labelled USDC", async () => {
    const { cookie } = await demoTenant(60);
    const { html } = await page(cookie, "/dashboard/earnings?network=tempo-testnet&status=COMPLETED");
    const events = text(html.split('aria-label="Events, table"')[1]!.split("</table>")[0]!);
    expect(events).not.toContain("USDC");
    const amounts = events.match(/\d+\.\d{2,6} \S+/g) ?? [];
    expect(amounts.length).toBeGreaterThan(0);
    expect(amounts.every((a) => a.endsWith(" pathUSD"))).toBe(true);
  });

  it("events follow the protocol, network and status filters too", async () => {
    const { tenant, cookie } = await demoTenant(150);
    const n = async (where: string, ...params: unknown[]) =>
      (await one<{ n: number }>(`SELECT count(*) AS n FROM events WHERE tenant_id = ?${where}`, tenant.id, ...params)).n;
    const eventsMatch = (html: string) => Number(/([\d,]+) events match/.exec(text(html))?.[1]?.replaceAll(",", ""));
    const mpp = await page(cookie, "/dashboard/earnings?protocol=mpp");
    expect(eventsMatch(mpp.html)).toBe(await n(" AND json_extract(metadata, '$.protocol') = 'mpp'"));
    expect(eventsMatch(mpp.html)).toBeLessThan(await n(""));
    const failed = await page(cookie, "/dashboard/earnings?status=FAILED");
    expect(eventsMatch(failed.html)).toBe(await n(" AND event_type = 'ERROR'"));
    const tempo = await page(cookie, "/dashboard/earnings?network=tempo-testnet&status=COMPLETED");
    expect(eventsMatch(tempo.html)).toBe(
      await n(" AND event_type = 'SUCCESS' AND json_extract(metadata, '$.network') = 'tempo-testnet'"),
    );
  });

  it("finds one payment by the receipt a buyer holds: its transaction id or its transfer's hash", async () => {
    const { tenant, cookie } = await demoTenant(60);
    const other = await demoTenant(5);
    const tx = await one<{ id: string; tx_hash: string }>(
      "SELECT id, tx_hash FROM transactions WHERE tenant_id = ? AND status = 'COMPLETED' LIMIT 1",
      tenant.id,
    );
    const eventsMatch = (html: string) => Number(/([\d,]+) events? match/.exec(text(html))?.[1]?.replaceAll(",", ""));
    for (const payment of [tx.id, tx.tx_hash, tx.tx_hash.toUpperCase().replace("0X", "0x")]) {
      const found = await page(cookie, `/dashboard/earnings?payment=${payment}`);
      expect(found.status, payment).toBe(200);
      expect(matches(found.html), payment).toBe(1);
      expect(found.html).toContain(`>${tx.tx_hash}</code>`);
      // Its request and its outcome, and no other event.
      expect(eventsMatch(found.html), payment).toBe(2);
      const csv = await page(cookie, `/dashboard/earnings/transactions.csv?payment=${payment}`);
      expect(
        csv.html
          .trimEnd()
          .split("\r\n")
          .map((l) => l.split(",")[0]),
      ).toEqual(["id", tx.id]);
    }
    // Another tenant's payment, or a hash of none, finds nothing.
    const theirs = await one<{ id: string; tx_hash: string }>(
      "SELECT id, tx_hash FROM transactions WHERE tenant_id = ? AND tx_hash IS NOT NULL LIMIT 1",
      other.tenant.id,
    );
    for (const payment of [theirs.id, theirs.tx_hash, `0x${"ab".repeat(32)}`]) {
      const none = await page(cookie, `/dashboard/earnings?payment=${payment}`);
      expect(none.status).toBe(200);
      expect(matches(none.html), payment).toBe(0);
      expect(eventsMatch(none.html), payment).toBe(0);
    }
    const bad = await page(cookie, "/dashboard/earnings?payment=0x1234");
    expect(bad.status).toBe(400);
    expect(text(bad.html)).toContain("a transaction id (txn_…) or a transaction hash");
  });

  it("hashes and payers in full with copy buttons and explorer links of their network", async () => {
    const { tenant, cookie } = await demoTenant(40);
    const tx = await one<{ tx_hash: string; payer_address: string; network: string }>(
      "SELECT tx_hash, payer_address, network FROM transactions WHERE tenant_id = ? AND status = 'COMPLETED' AND network = 'base-sepolia' LIMIT 1",
      tenant.id,
    );
    const { html } = await page(cookie, "/dashboard/earnings?status=COMPLETED&network=base-sepolia");
    expect(html).toContain(`>${tx.tx_hash}</code>`);
    expect(html).toContain(`href="https://sepolia.basescan.org/tx/${tx.tx_hash}"`);
    expect(html).toContain(`href="https://sepolia.basescan.org/address/${tx.payer_address}"`);
    expect(html).toMatch(/data-copy="#tx-txn_[0-9a-z_]+" data-copy-what="transaction hash 0x/);
  });

  it("exports the filtered transactions as CSV, streamed a chunk at a time, every row once, formulas neutralised", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    // A name a spreadsheet would run as a formula.
    await env.DB.prepare("UPDATE paywalls SET name = ? WHERE id = ?").bind('=HYPERLINK("http://evil")', paywall.id).run();
    const rows = Array.from({ length: CSV_CHUNK * 2 + 7 }, (_, i) => ({
      id: `txn_csv${String(i).padStart(17, "0")}`,
      tenantId: tenant.id,
      paywallId: paywall.id,
      serviceId: paywall.serviceId,
      protocol: i % 3 === 0 ? ("mpp" as const) : ("x402" as const),
      network: "base-sepolia",
      amount: String(10_000 + i),
      currency: "USDC" as const,
      status: "COMPLETED" as const,
      payerAddress: `0x${"a".repeat(40)}`,
      txHash: `0x${i.toString(16).padStart(64, "0")}`,
      createdAt: new Date(Date.UTC(2026, 10, 1) + (i % 50) * 60_000),
    }));
    await insertHistoricTransactions(rows);
    const cookie = await signIn(tenant);
    const all = await page(cookie, "/dashboard/earnings/transactions.csv");
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(all.headers.get("content-disposition")).toMatch(/^attachment; filename="transactions-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = all.html.trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "id,created_at,paywall_id,paywall_name,service_id,protocol,network,token,amount,amount_micro,status,failure_reason,payer,tx_hash,settled_at",
    );
    const ids = lines.slice(1).map((l) => l.split(",")[0]);
    expect(ids).toHaveLength(rows.length);
    expect(new Set(ids).size).toBe(rows.length);
    // Newest first, ties broken by id, exactly as the list pages.
    expect(lines[1]).toContain('\'=HYPERLINK(""http://evil"")');
    expect(lines.find((l) => l.startsWith("txn_csv00000000000000001,"))).toMatch(/,USDC,0\.010001,10001,COMPLETED,/);
    // The filters apply.
    const mpp = await page(cookie, "/dashboard/earnings/transactions.csv?protocol=mpp");
    expect(mpp.html.trimEnd().split("\r\n")).toHaveLength(1 + rows.filter((r) => r.protocol === "mpp").length);
    expect((await page(cookie, "/dashboard/earnings")).html).toContain('href="/dashboard/earnings/transactions.csv"');
    expect((await page(cookie, "/dashboard/earnings?protocol=mpp")).html).toContain(
      'href="/dashboard/earnings/transactions.csv?protocol=mpp"',
    );
  });

  it("exports 100,000 transactions whole and streamed: the first rows arrive at once, every row once, in bounded time", {
    timeout: 240_000,
  }, async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const total = 100_000;
    // One statement writes them all (the ledger's per-payment batches would take minutes here).
    await insertCompletedInBulk(env.DB, {
      count: total,
      tenantId: tenant.id,
      paywallId: paywall.id,
      serviceId: paywall.serviceId,
      from: Date.UTC(2026, 9, 1),
    });
    const cookie = await signIn(tenant);
    const started = performance.now();
    const res = await exports.default.fetch(
      new Request("https://api.test/dashboard/earnings/transactions.csv", { headers: { cookie } }),
    );
    expect(res.status).toBe(200);
    // Read as a browser downloads it: the first rows arrive while the Worker has read one query's worth, not the whole
    // list (an export that built the file first would send its first row only at the end).
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let body = "";
    let firstRowAt: number | undefined;
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      body += part.value;
      if (firstRowAt === undefined && body.includes("\r\ntxn_big")) firstRowAt = performance.now() - started;
    }
    const ms = performance.now() - started;
    const lines = body.trimEnd().split("\r\n");
    expect(lines).toHaveLength(total + 1);
    const ids = new Set(lines.slice(1).map((l) => l.slice(0, l.indexOf(","))));
    expect(ids.size).toBe(total);
    expect(ids.has("txn_big00000000000000000")).toBe(true);
    expect(ids.has(`txn_big${String(total - 1).padStart(17, "0")}`)).toBe(true);
    printToRunner(
      `CSV export: ${total} rows, ${(body.length / 1e6).toFixed(1)} MB in ${Math.round(ms)} ms, first row after ${Math.round(firstRowAt ?? ms)} ms (${Math.ceil(total / CSV_CHUNK)} queries of ${CSV_CHUNK})`,
    );
    expect(firstRowAt).toBeLessThan(ms / 4);
    // Far from the request limits a browser download meets; a regression to one query per row would not finish.
    expect(ms).toBeLessThan(120_000);
  });
});
