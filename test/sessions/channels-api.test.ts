// `GET /v1/channels` and `GET /v1/channels/{id}`: a tenant's session channels as the records consumer wrote them
// (seeded through `applyPaymentRecords`), their amounts exact integer strings, only to a key that may read payments.
import { beforeAll, describe, expect, it } from "vitest";
import { createPaywallFor } from "../history/support.ts";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { applyRecords, channelId, channelOf, channelRecord } from "./channels-support.ts";

const at = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes));

describe("session channels in the management API", () => {
  let key: string;
  let tenantId: string;
  let paywallId: string;
  let ids: { big: string; closed: string; fresh: string; settlement: string };

  beforeAll(async () => {
    const made = await createApiKey({ scopes: ["transactions:read"] });
    key = made.key;
    tenantId = made.tenant.id;
    const paywall = await createPaywallFor(made.tenant);
    const other = await createPaywallFor(made.tenant);
    paywallId = paywall.id;
    // Beyond 2^53: a float would round them.
    const big = channelOf(paywall, {
      deposit: "9007199254740999",
      charged: "9007199254740993",
      claimed: "9007199254740993",
      settled: "2",
      seq: 12,
      openedAt: at(1),
      lastCallAt: at(9),
    });
    const closed = channelOf(paywall, {
      network: "tempo-testnet",
      currency: "pathUSD",
      protocol: "mpp",
      charged: "75000",
      claimed: "75000",
      settled: "75000",
      status: "CLOSED",
      seq: 30,
      openedAt: at(2),
    });
    const fresh = channelOf(other, { openedAt: at(3) });
    const settlement = `txn_settle_${big.id.slice(2, 34)}`;
    await applyRecords([
      channelRecord({ ...big, charged: "5", settled: "0", seq: 3 }),
      channelRecord(big),
      channelRecord(closed),
      channelRecord(fresh),
      {
        kind: "transaction",
        row: {
          id: settlement,
          tenantId,
          paywallId,
          serviceId: paywall.serviceId,
          protocol: "x402",
          network: "base-sepolia",
          amount: "2",
          currency: "USDC",
          status: "COMPLETED",
          payerAddress: big.payerAddress,
          txHash: `0x${"cd".repeat(32)}`,
          channelId: big.id,
          createdAt: at(10),
          settledAt: at(10),
        },
      },
    ]);
    ids = { big: big.id, closed: closed.id, fresh: fresh.id, settlement };
  });

  it("lists the tenant's channels newest opened first, amounts as exact micro-unit strings", async () => {
    const { status, body } = await api("/v1/channels", { key });
    expect(status).toBe(200);
    expect(body.data.map((c: { id: string }) => c.id)).toEqual([ids.fresh, ids.closed, ids.big]);
    expect(body.data[2]).toEqual({
      id: ids.big,
      paywallId,
      serviceId: expect.any(String),
      protocol: "x402",
      network: "base-sepolia",
      currency: "USDC",
      payer: expect.stringMatching(/^0x[0-9a-f]{40}$/),
      deposit: "9007199254740999",
      charged: "9007199254740993",
      claimed: "9007199254740993",
      settled: "2",
      unsettled: "9007199254740991",
      status: "OPEN",
      openedAt: "2026-11-01T12:01:00.000Z",
      lastCallAt: "2026-11-01T12:09:00.000Z",
    });
    expect(body.data[0]).toMatchObject({ charged: "0", unsettled: "0", lastCallAt: null });
    expect(body.meta.pagination).toEqual({ total: 3, limit: 20, offset: 0, hasMore: false });
  });

  it("pages through the list and filters it by status, paywall and network", async () => {
    const first = await api("/v1/channels?limit=2", { key });
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([ids.fresh, ids.closed]);
    expect(first.body.meta.pagination).toEqual({ total: 3, limit: 2, offset: 0, hasMore: true });
    const second = await api("/v1/channels?limit=2&offset=2", { key });
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([ids.big]);
    expect(second.body.meta.pagination).toEqual({ total: 3, limit: 2, offset: 2, hasMore: false });

    const idsOf = async (query: string) =>
      (await api(`/v1/channels?${query}`, { key })).body.data.map((c: { id: string }) => c.id);
    expect(await idsOf("status=CLOSED")).toEqual([ids.closed]);
    expect(await idsOf("status=OPEN")).toEqual([ids.fresh, ids.big]);
    expect(await idsOf(`paywallId=${paywallId}`)).toEqual([ids.closed, ids.big]);
    expect(await idsOf("network=tempo-testnet")).toEqual([ids.closed]);
    const bad = await api("/v1/channels?status=open", { key });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION_ERROR");
  });

  it("gets one channel by its id, in any letter case", async () => {
    const { status, body } = await api(`/v1/channels/${ids.closed.toUpperCase().replace("0X", "0x")}`, { key });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ id: ids.closed, status: "CLOSED", charged: "75000", settled: "75000", unsettled: "0" });
    expect(body.data.currency).toBe("pathUSD");
    const unknown = await api(`/v1/channels/${channelId()}`, { key });
    expect([unknown.status, unknown.body.code]).toEqual([404, "NOT_FOUND"]);
    const malformed = await api("/v1/channels/not-a-channel", { key });
    expect([malformed.status, malformed.body.code]).toEqual([404, "NOT_FOUND"]);
    const tooLong = await api(`/v1/channels/${ids.big}00`, { key });
    expect([tooLong.status, tooLong.body.code]).toEqual([400, "VALIDATION_ERROR"]);
  });

  it("a settlement's transaction names its channel; a payment per call names none", async () => {
    const { body } = await api(`/v1/transactions/${ids.settlement}`, { key });
    expect(body.data).toMatchObject({ id: ids.settlement, amount: "2", channelId: ids.big });
    const listed = await api(`/v1/transactions?paywallId=${paywallId}`, { key });
    expect(listed.body.data.map((t: { channelId: string | null }) => t.channelId)).toEqual([ids.big]);
  });

  it("a key without transactions:read is refused with 403 INSUFFICIENT_SCOPE", async () => {
    const { key: narrow } = await createApiKey({ scopes: ["events:read", "paywalls:read"] });
    for (const path of ["/v1/channels", `/v1/channels/${ids.big}`]) {
      const { status, body } = await api(path, { key: narrow });
      expect([status, body.code]).toEqual([403, "INSUFFICIENT_SCOPE"]);
    }
  });

  it("another tenant sees none of these channels: not listed, and not found by id", async () => {
    const { key: stranger } = await createApiKey({ scopes: ["transactions:read"] });
    const list = await api("/v1/channels", { key: stranger });
    expect([list.status, list.body.data, list.body.meta.pagination.total]).toEqual([200, [], 0]);
    const one = await api(`/v1/channels/${ids.big}`, { key: stranger });
    expect([one.status, one.body.code]).toEqual([404, "NOT_FOUND"]);
    expect(one.text).not.toContain("9007199254740993");
    const filtered = await api(`/v1/channels?paywallId=${paywallId}`, { key: stranger });
    expect([filtered.status, filtered.body.code]).toEqual([403, "FORBIDDEN"]);
  });
});
