// Session channels as their objects report them to D1: records of kind `channel`, applied through the read model's own
// writer (`applyPaymentRecords`), never inserted behind its back.
import { env } from "cloudflare:workers";
import { READ_MODEL_MOVES } from "../../src/core/ledger/payment-object.ts";
import { getDb } from "../../src/db/client.ts";
import { applyPaymentRecords, type PaymentRecord } from "../../src/db/ledger.ts";
import type { NewChannel, PaywallRow } from "../../src/db/schema.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { randomWallet } from "../support/factories.ts";

/** A channel id as the chain names it: 32 bytes, lowercase hex. */
export const channelId = () => `0x${randomHex(32)}`;

/** A channel of `paywall` on base-sepolia, just opened with a 1 USDC deposit, nothing charged yet (seq 1). */
export const channelOf = (
  paywall: Pick<PaywallRow, "id" | "tenantId" | "serviceId">,
  overrides: Partial<NewChannel> = {},
): NewChannel => ({
  id: channelId(),
  tenantId: paywall.tenantId,
  paywallId: paywall.id,
  serviceId: paywall.serviceId,
  protocol: "x402",
  network: "base-sepolia",
  currency: "USDC",
  payerAddress: randomWallet(),
  deposit: "1000000",
  charged: "0",
  claimed: "0",
  settled: "0",
  status: "OPEN",
  seq: 1,
  openedAt: new Date(),
  lastCallAt: null,
  updatedAt: new Date(),
  ...overrides,
});

export const channelRecord = (row: NewChannel): PaymentRecord => ({ kind: "channel", row });

/** Applies records as the payment-records consumer does. */
export const applyRecords = (records: PaymentRecord[]) => applyPaymentRecords(getDb(env.DB), records, READ_MODEL_MOVES);

/** The channel's row as D1 holds it (snake_case, raw), or null. */
export const storedChannel = (id: string) =>
  env.DB.prepare("SELECT * FROM channels WHERE id = ?").bind(id).first<Record<string, unknown>>();
