import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { createApiKey, createTenant } from "../support/factories.ts";
import { address, createPaywallFor, ingest, recordId, txHash } from "./support.ts";

const countRows = async (table: "events" | "transactions", id: string) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE id = ?`).bind(id).first<{ n: number }>())?.n;

describe("Ingest entrypoint: transactions", () => {
  it("records a pending transaction with tenant and service taken from the paywall", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const id = recordId("txn");
    const result = await ingest().recordTransaction({
      id,
      paywallId: paywall.id,
      protocol: "x402",
      network: "base-sepolia",
      amount: "1000",
    });
    expect(result).toMatchObject({ ok: true, data: { created: true } });
    if (!result.ok) return;
    expect(result.data.record).toMatchObject({
      id,
      paywallId: paywall.id,
      serviceId: paywall.serviceId,
      status: "PENDING",
      currency: "USDC",
      settledAt: null,
      Paywall: { id: paywall.id, slug: paywall.slug, name: paywall.name },
    });
    const row = await env.DB.prepare("SELECT tenant_id, service_id FROM transactions WHERE id = ?").bind(id).first();
    expect(row).toEqual({ tenant_id: tenant.id, service_id: paywall.serviceId });
  });

  it("ignores a tenant or service claimed by the caller: unknown fields are refused", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const other = await createTenant();
    const result = await ingest().recordTransaction({
      id: recordId("txn"),
      paywallId: paywall.id,
      protocol: "x402",
      network: "base-sepolia",
      amount: "1000",
      tenantId: other.id,
    } as never);
    expect(result).toMatchObject({
      ok: false,
      code: "VALIDATION_ERROR",
      details: [{ path: "tenantId", message: "Unknown field" }],
    });
  });

  it("is idempotent on the caller's id: the same id twice stores one row", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const input = {
      id: recordId("txn"),
      paywallId: paywall.id,
      protocol: "mpp" as const,
      network: "tempo-testnet" as const,
      amount: "1000",
    };
    const first = await ingest().recordTransaction(input);
    const again = await ingest().recordTransaction(input);
    expect(first).toMatchObject({ ok: true, data: { created: true } });
    expect(again).toMatchObject({ ok: true, data: { created: false, record: { id: input.id } } });
    expect(await countRows("transactions", input.id)).toBe(1);
  });

  it("refuses an id already used for another paywall's record", async () => {
    const tenant = await createTenant();
    const [a, b] = [await createPaywallFor(tenant), await createPaywallFor(tenant)];
    const id = recordId("txn");
    await ingest().recordTransaction({ id, paywallId: a.id, protocol: "x402", network: "base-sepolia", amount: "1" });
    const reused = await ingest().recordTransaction({
      id,
      paywallId: b.id,
      protocol: "x402",
      network: "base-sepolia",
      amount: "1",
    });
    expect(reused).toMatchObject({ ok: false, code: "CONFLICT" });
  });

  it("validates its input with clear errors", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const base = { id: recordId("txn"), paywallId: paywall.id, protocol: "x402", network: "base-sepolia", amount: "1000" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, amount: "1.5" }, "amount"],
      [{ ...base, amount: "-1" }, "amount"],
      [{ ...base, protocol: "ach" }, "protocol"],
      [{ ...base, network: "ethereum" }, "network"],
      [{ ...base, id: "short" }, "id"],
      [{ ...base, payerAddress: "0x123" }, "payerAddress"],
      [{ ...base, status: "COMPLETED" }, "txHash"],
      [{ ...base, status: "FAILED" }, "failureReason"],
      [{ ...base, createdAt: new Date(Date.now() + 3_600_000).toISOString() }, "createdAt"],
    ];
    for (const [input, path] of cases) {
      const result = await ingest().recordTransaction(input as never);
      expect(result, path).toMatchObject({ ok: false, code: "VALIDATION_ERROR" });
      const { details } = result as unknown as { details: { path: string }[] };
      expect(details.map((d) => d.path)).toContain(path);
    }
    const offNetwork = await ingest().recordTransaction({ ...base, network: "base" } as never);
    expect(offNetwork).toMatchObject({ ok: false, code: "VALIDATION_ERROR" });
    const unknown = await ingest().recordTransaction({ ...base, paywallId: "pw_unknown" } as never);
    expect(unknown).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });

  it("writes a batch atomically: one bad record stores none", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const good = { id: recordId("txn"), paywallId: paywall.id, protocol: "x402", network: "base-sepolia", amount: "5" };
    const bad = { ...good, id: recordId("txn"), paywallId: "pw_missing" };
    const result = await ingest().recordTransactions([good, bad] as never);
    expect(result).toMatchObject({ ok: false, code: "NOT_FOUND" });
    expect(await countRows("transactions", good.id)).toBe(0);
  });

  describe("settlement", () => {
    const pending = async () => {
      const paywall = await createPaywallFor(await createTenant());
      const id = recordId("txn");
      await ingest().recordTransaction({
        id,
        paywallId: paywall.id,
        protocol: "x402",
        network: "base-sepolia",
        amount: "1000",
        payerAddress: address(),
      });
      return id;
    };

    it("moves PENDING to COMPLETED, and a repeat of the same settlement is accepted", async () => {
      const id = await pending();
      const hash = txHash();
      const settledAt = new Date(Date.now() - 1000).toISOString();
      const done = await ingest().settleTransaction(id, { status: "COMPLETED", txHash: hash, settledAt });
      expect(done).toMatchObject({ ok: true, data: { status: "COMPLETED", txHash: hash, settledAt } });
      expect(await ingest().settleTransaction(id, { status: "COMPLETED", txHash: hash, settledAt })).toMatchObject({ ok: true });
    });

    it("moves PENDING to FAILED with a reason", async () => {
      const id = await pending();
      const failed = await ingest().settleTransaction(id, { status: "FAILED", failureReason: "signature expired" });
      expect(failed).toMatchObject({ ok: true, data: { status: "FAILED", failureReason: "signature expired", txHash: null } });
    });

    it("refuses every other transition", async () => {
      const completed = await pending();
      await ingest().settleTransaction(completed, { status: "COMPLETED", txHash: txHash() });
      expect(await ingest().settleTransaction(completed, { status: "FAILED", failureReason: "x" })).toMatchObject({
        ok: false,
        code: "CONFLICT",
        details: { status: "COMPLETED" },
      });
      expect(await ingest().settleTransaction(completed, { status: "COMPLETED", txHash: txHash() })).toMatchObject({
        ok: false,
        code: "CONFLICT",
      });
      const failed = await pending();
      await ingest().settleTransaction(failed, { status: "FAILED", failureReason: "x" });
      expect(await ingest().settleTransaction(failed, { status: "COMPLETED", txHash: txHash() })).toMatchObject({
        ok: false,
        code: "CONFLICT",
      });
      expect(await ingest().settleTransaction(await pending(), { status: "PENDING" } as never)).toMatchObject({
        ok: false,
        code: "VALIDATION_ERROR",
      });
      expect(await ingest().settleTransaction("txn_nope_123", { status: "FAILED", failureReason: "x" })).toMatchObject({
        ok: false,
        code: "NOT_FOUND",
      });
    });

    it("lets exactly one of two concurrent different settlements win", async () => {
      const id = await pending();
      const results = await Promise.all([
        ingest().settleTransaction(id, { status: "COMPLETED", txHash: txHash() }),
        ingest().settleTransaction(id, { status: "FAILED", failureReason: "raced" }),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok && (r as unknown as { code: string }).code === "CONFLICT")).toHaveLength(1);
    });
  });
});

describe("Ingest entrypoint: events", () => {
  it("records an event with tenant and service from the paywall, idempotently", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const input = {
      id: recordId("evt"),
      paywallId: paywall.id,
      eventType: "SUCCESS" as const,
      statusCode: 200,
      responseTime: 87,
      amount: "1000",
      metadata: { path: "/paid" },
    };
    const first = await ingest().recordEvent(input);
    expect(first).toMatchObject({
      ok: true,
      data: {
        created: true,
        record: { ...input, serviceId: paywall.serviceId, Paywall: { id: paywall.id, slug: paywall.slug } },
      },
    });
    expect(await ingest().recordEvent(input)).toMatchObject({ ok: true, data: { created: false } });
    expect(await countRows("events", input.id)).toBe(1);
    const row = await env.DB.prepare("SELECT tenant_id FROM events WHERE id = ?").bind(input.id).first();
    expect(row).toEqual({ tenant_id: tenant.id });
  });

  it("refuses bad events", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const base = { id: recordId("evt"), paywallId: paywall.id, eventType: "REQUEST" };
    for (const [input, path] of [
      [{ ...base, eventType: "CLICK" }, "eventType"],
      [{ ...base, statusCode: 99 }, "statusCode"],
      [{ ...base, responseTime: -1 }, "responseTime"],
      [{ ...base, metadata: { big: "x".repeat(3000) } }, "metadata"],
      [{ ...base, metadata: [1, 2] }, "metadata"],
    ] as [Record<string, unknown>, string][]) {
      const result = await ingest().recordEvent(input as never);
      expect(result, path).toMatchObject({ ok: false, code: "VALIDATION_ERROR" });
    }
    expect(await ingest().recordEvents([])).toMatchObject({ ok: false, code: "VALIDATION_ERROR" });
  });

  it("writes what one tenant's gateway reports into that tenant's history only", async () => {
    const [a, b] = [await createApiKey({ scopes: ["events:read"] }), await createApiKey({ scopes: ["events:read"] })];
    const paywall = await createPaywallFor(a.tenant);
    const id = recordId("evt");
    await ingest().recordEvent({ id, paywallId: paywall.id, eventType: "REQUEST" });
    expect((await api(`/v1/events/${id}`, { key: a.key })).status).toBe(200);
    expect((await api(`/v1/events/${id}`, { key: b.key })).status).toBe(403);
    const listB = await api<{ data: unknown[] }>("/v1/events", { key: b.key });
    expect(listB.body.data).toEqual([]);
  });
});
