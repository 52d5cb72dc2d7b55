import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { paymentRecordIds } from "../core/ledger/ids.ts";
import { moveStatements } from "../core/ledger/ledger.ts";
import { NETWORK_TABLE } from "../core/money/network-table.ts";
import type { NetworkId } from "../core/money/networks.ts";
import { protocolOf } from "../core/money/tokens.ts";
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

/** Payments written per D1 batch (each is two moves of three statements). */
const PAYMENTS_PER_BATCH = 15;

/**
 * Writes `count` buyer requests spread over the last week with the payment ledger's own moves, as the gateway would:
 * each is a payment started (PENDING + REQUEST), then completed (COMPLETED + SUCCESS), failed (FAILED + ERROR), or,
 * one in ten of the successful ones, left PENDING. The moves of several payments go in one batch.
 */
export async function writeDemoData(db: Db, tenant: Tenant, count: number, random: Random = Math.random) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const targets = await demoPaywalls(db, tenant);
  const now = Date.now();
  let events = 0;
  let batch: BatchItem<"sqlite">[] = [];
  const flush = async () => {
    if (batch.length > 0) await db.batch(batch as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    batch = [];
  };
  for (let i = 0; i < count; i++) {
    const paywall = pick(targets);
    const at = new Date(now - Math.floor(random() * 7 * DAY_MS));
    const later = new Date(at.getTime() + 50 + Math.floor(random() * 900));
    const network = pick(paywall.networks) as NetworkId;
    const protocol = protocolOf(network); // MPP on Tempo, x402 on every EVM network: as the gateway records them
    const payer = `0x${randomHex(20)}`;
    const { transactionId } = await paymentRecordIds(protocol, network, payer, `0x${randomHex(32)}`);
    const ref = {
      transactionId,
      tenantId: tenant.id,
      paywallId: paywall.id,
      serviceId: paywall.serviceId,
      protocol,
      network,
      amount: paywall.price,
    } as const;
    const entry = NETWORK_TABLE[network];
    batch.push(
      ...moveStatements.start(db, {
        ...ref,
        currency: entry.token,
        payer,
        method: "GET",
        at,
        pending: { reference: `0x${randomHex(32)}`, validBefore: later, asset: entry.asset, payTo: paywall.merchantWallet },
      }),
    );
    events++;
    const outcome = { statusCode: 200, responseTime: later.getTime() - at.getTime(), at: later };
    if (random() < 0.85) {
      // One in ten successful ones stays PENDING: its outcome not known yet.
      if (random() >= 0.1) {
        batch.push(...moveStatements.complete(db, ref, `0x${randomHex(32)}`, outcome));
        events++;
      }
    } else {
      const reason = pick(["insufficient funds", "signature expired", "upstream answered 502"]);
      batch.push(...moveStatements.fail(db, ref, reason, { ...outcome, statusCode: pick([402, 500, 502, 504]) }));
      events++;
    }
    if ((i + 1) % PAYMENTS_PER_BATCH === 0) await flush();
  }
  await flush();
  return { tenantId: tenant.id, paywalls: targets.map((p) => p.id), events, transactions: count };
}
