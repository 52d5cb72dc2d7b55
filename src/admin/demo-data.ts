import { eq } from "drizzle-orm";
import { MAX_BATCH, recordEvents, recordTransactions } from "../core/ledger/ingest.ts";
import type { Db } from "../db/client.ts";
import { insertPaywallWithinCap } from "../db/paywalls.ts";
import { type PaywallRow, paywalls, type Tenant } from "../db/schema.ts";
import { insertServiceWithinCap } from "../db/services.ts";
import { newId, randomHex } from "../lib/ids.ts";

const DAY_MS = 86_400_000;

/** A demo service with three paywalls, for a tenant that has none yet (no secrets: authMethod `none`). */
async function demoPaywalls(db: Db, tenant: Tenant): Promise<PaywallRow[]> {
  const existing = await db.select().from(paywalls).where(eq(paywalls.tenantId, tenant.id)).limit(20);
  if (existing.length > 0) return existing;
  const now = new Date();
  const service = await insertServiceWithinCap(
    db,
    {
      id: newId("svc"),
      tenantId: tenant.id,
      name: "Demo weather API",
      description: "Created by demo-data",
      baseUrl: "https://api.weather.example.com",
      authMethod: "none",
      authConfig: {},
      networks: ["base-sepolia", "tempo-testnet"],
      mode: "testnet",
      categories: ["weather"],
      publicRoutes: [],
      siwxRoutes: [],
      createdAt: now,
      updatedAt: now,
    },
    Number.MAX_SAFE_INTEGER,
  );
  if (!service) throw new Error("could not create the demo service");
  const specs = [
    { slug: "forecast", name: "Forecast", route: "/v1/forecast", price: "10000", networks: ["base-sepolia", "tempo-testnet"] },
    { slug: "history", name: "Historical data", route: "/v1/history", price: "50000", networks: ["base-sepolia"] },
    { slug: "alerts", name: "Severe weather alerts", route: "/v1/alerts", price: "2500", networks: ["tempo-testnet"] },
  ];
  const created: PaywallRow[] = [];
  for (const s of specs) {
    const outcome = await insertPaywallWithinCap(
      db,
      {
        id: newId("pw"),
        tenantId: tenant.id,
        serviceId: service.id,
        slug: s.slug,
        name: s.name,
        targetType: "ROUTE",
        targetRoute: s.route,
        price: s.price,
        currency: "USDC",
        networks: s.networks,
        merchantWallet: tenant.walletAddress,
        timeout: 60_000,
        allowedMethods: ["GET"],
        allowedHeaders: [],
        fulfillmentMode: "PROXY",
        enabled: true,
        createdAt: now,
        updatedAt: now,
      },
      Number.MAX_SAFE_INTEGER,
    );
    if ("row" in outcome) created.push(outcome.row);
  }
  return created;
}

/** A number in [0, 1); `Math.random` unless a caller (a test) passes a seeded generator. */
type Random = () => number;

/**
 * Writes `count` buyer requests spread over the last week through the ingestion code: each request is a
 * REQUEST event, then SUCCESS (with a COMPLETED or PENDING transaction) or ERROR (with a FAILED one).
 */
export async function writeDemoData(db: Db, tenant: Tenant, count: number, random: Random = Math.random) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const targets = await demoPaywalls(db, tenant);
  const events: Record<string, unknown>[] = [];
  const transactions: Record<string, unknown>[] = [];
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const paywall = pick(targets);
    const at = new Date(now - Math.floor(random() * 7 * DAY_MS));
    const later = new Date(at.getTime() + 50 + Math.floor(random() * 900));
    const network = pick(paywall.networks);
    const protocol = network.startsWith("tempo") && random() < 0.5 ? "mpp" : "x402";
    const ok = random() < 0.85;
    const ref = randomHex(8);
    events.push({ id: `evt_demo_${ref}_r`, paywallId: paywall.id, eventType: "REQUEST", createdAt: at.toISOString() });
    events.push({
      id: `evt_demo_${ref}_${ok ? "s" : "e"}`,
      paywallId: paywall.id,
      eventType: ok ? "SUCCESS" : "ERROR",
      statusCode: ok ? 200 : pick([402, 500, 502, 504]),
      responseTime: later.getTime() - at.getTime(),
      amount: ok ? paywall.price : null,
      metadata: { method: "GET", path: paywall.targetRoute ?? "/" },
      createdAt: later.toISOString(),
    });
    const pending = ok && random() < 0.1;
    transactions.push({
      id: `txn_demo_${ref}`,
      paywallId: paywall.id,
      protocol,
      network,
      amount: paywall.price,
      status: ok ? (pending ? "PENDING" : "COMPLETED") : "FAILED",
      payerAddress: `0x${randomHex(20)}`,
      txHash: ok && !pending ? `0x${randomHex(32)}` : null,
      failureReason: ok ? null : pick(["insufficient funds", "signature expired", "upstream error"]),
      createdAt: at.toISOString(),
      ...(ok && !pending ? { settledAt: later.toISOString() } : {}),
    });
  }
  for (let i = 0; i < events.length; i += MAX_BATCH) {
    const result = await recordEvents(db, events.slice(i, i + MAX_BATCH));
    if (!result.ok) throw new Error(`${result.code}: ${result.error}`);
  }
  for (let i = 0; i < transactions.length; i += MAX_BATCH) {
    const result = await recordTransactions(db, transactions.slice(i, i + MAX_BATCH));
    if (!result.ok) throw new Error(`${result.code}: ${result.error}`);
  }
  return { tenantId: tenant.id, paywalls: targets.map((p) => p.id), events: events.length, transactions: transactions.length };
}
