// Unfiltered totals, event stats and beta caps read per-tenant counts kept by triggers (migrations/0003).
// These tests compare them with the rows themselves through every kind of write, cascades included.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { startPayment } from "../../src/core/ledger/ledger.ts";
import { api } from "../support/client.ts";
import { createApiKey, db } from "../support/factories.ts";
import { address, txHash } from "../support/payments.ts";

const kept = async (tenantId: string) =>
  Object.fromEntries(
    (
      await env.DB.prepare("SELECT kind, n FROM tenant_counts WHERE tenant_id = ?")
        .bind(tenantId)
        .all<{ kind: string; n: number }>()
    ).results.map((r) => [r.kind, r.n]),
  );

const serviceBody = {
  name: "S",
  baseUrl: "https://api.example.com",
  authMethod: "none",
  networks: ["base-sepolia"],
  mode: "testnet",
};
const paywallBody = (serviceId: string, slug: string) => ({
  slug,
  name: slug,
  targetType: "ROUTE",
  targetRoute: `/${slug}`,
  serviceId,
  price: "100",
  currency: "USDC",
  networks: ["base-sepolia"],
  fulfillmentMode: "PROXY",
});

it("follow creates, deletes and the cascade of a service delete", async () => {
  const { key, tenant } = await createApiKey();
  const [a, b] = await Promise.all([1, 2].map(() => api("/v1/services", { key, method: "POST", body: serviceBody })));
  const ids = [a!.body.data.id, b!.body.data.id];
  await Promise.all(["x", "y", "z"].map((slug) => api("/v1/paywalls", { key, method: "POST", body: paywallBody(ids[0], slug) })));
  await api("/v1/paywalls", { key, method: "POST", body: paywallBody(ids[1], "w") });
  const conflict = await api("/v1/paywalls", { key, method: "POST", body: paywallBody(ids[1], "w") });
  expect(conflict.status).toBe(409);
  expect(await kept(tenant.id)).toEqual({ services: 2, paywalls: 4 });
  expect((await api("/v1/paywalls", { key })).body.meta.pagination.total).toBe(4);

  await api(`/v1/services/${ids[0]}`, { key, method: "DELETE" });
  expect(await kept(tenant.id)).toEqual({ services: 1, paywalls: 1 });
  expect((await api("/v1/paywalls", { key })).body.meta.pagination.total).toBe(1);
  expect((await api("/v1/services", { key })).body.meta.pagination.total).toBe(1);
  expect((await api("/v1/services?offset=5", { key })).body.meta.pagination).toEqual({
    total: 1,
    limit: 20,
    offset: 5,
    hasMore: false,
  });
});

it("count the same payment started again once", async () => {
  const { key, tenant } = await createApiKey();
  const svc = await api("/v1/services", { key, method: "POST", body: serviceBody });
  const pw = await api("/v1/paywalls", { key, method: "POST", body: paywallBody(svc.body.data.id, "p") });
  const start = {
    transactionId: `txn_x402_${txHash().slice(2, 42)}`,
    tenantId: tenant.id,
    paywallId: pw.body.data.id,
    serviceId: svc.body.data.id,
    protocol: "x402" as const,
    network: "base-sepolia" as const,
    amount: "100",
    currency: "USDC" as const,
    payer: address(),
    method: "GET",
    pending: { reference: txHash(), validBefore: new Date(Date.now() + 60_000), asset: address(), payTo: address() },
  };
  const started = [];
  for (let i = 0; i < 3; i++) started.push(await startPayment(db(), start));
  expect(started).toEqual([true, false, false]);
  expect(await kept(tenant.id)).toMatchObject({ "events:REQUEST": 1, transactions: 1 });
  expect((await api("/v1/events", { key })).body.meta.stats).toEqual({ REQUEST: 1, SUCCESS: 0, ERROR: 0 });
  expect((await api("/v1/transactions", { key })).body.meta.pagination.total).toBe(1);
});
