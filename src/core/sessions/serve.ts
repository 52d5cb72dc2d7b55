import { HTTPFacilitatorClient } from "@x402/core/http";
import { type FacilitatorClient, x402ResourceServer } from "@x402/core/server";
import { type PaymentPayload, type PaymentRequirements, SettleError, type SettleResponse, VerifyError } from "@x402/core/types";
import {
  BatchSettlementEvmScheme,
  type Channel,
  type ChannelStorage,
  type ChannelUpdateResult,
} from "@x402/evm/batch-settlement/server";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { NewEvent } from "../../db/events.ts";
import type { PaymentRecord } from "../../db/ledger.ts";
import type { NewChannel } from "../../db/schema.ts";
import { newId, sha256Hex } from "../../lib/ids.ts";

// A session's paid call, inside its channel's object (./channel-object.ts): `@x402/evm`'s batch-settlement server
// scheme as published, over the object's own record, run within the object's one-at-a-time turn.

/** What a channel's object knows of who sells through it, bound by its first paid call (the deposit). */
export interface ChannelMeta {
  tenantId: string;
  paywallId: string;
  serviceId: string | null;
  /** The gateway's network id (`base-sepolia`). */
  network: string;
  currency: "USDC";
  openedAt: number;
}

/** A paid call on a channel, as the gateway hands it to the channel's object. */
export interface ServeRequest {
  /** The object's own name (`channel:<caip2 network>:<receiver>:<channel id>`): where landed records are reported. */
  name: string;
  payload: PaymentPayload;
  /** The paywall's `batch-settlement` requirement the payload was made for. */
  requirements: PaymentRequirements;
  facilitatorUrl: string;
  meta: Omit<ChannelMeta, "openedAt">;
  /** The request the voucher pays for (src/gateway/paid-answer.ts `requestFingerprint`). */
  fingerprint: string;
}

/** What the gateway's `forward()` answers: the upstream's status, and its answer sealed to keep (null: not kept). */
export interface ForwardResult {
  status: number;
  kept: string | null;
}

/**
 * How a paid call ended: `answered` (the upstream answered below 400 and the charge is committed; `settle` is the
 * scheme's settle result for `PAYMENT-RESPONSE`), `unpaid` (the upstream failed: nothing charged), `kept` (the same
 * voucher for the same request again: its kept answer, nothing charged), `refunded` (the scheme answered a refund
 * itself), or `refused` (the scheme's reason; `accepts` the requirement with the channel's state to correct from).
 */
export type Served =
  | { kind: "answered"; settle: SettleResponse }
  | { kind: "unpaid" }
  | { kind: "kept"; kept: string | null; status: number; settle: SettleResponse }
  | { kind: "refunded"; settle: SettleResponse; body: unknown }
  | { kind: "refused"; reason: string; accepts?: PaymentRequirements };

/** The last committed voucher: the request it paid for and the answer it got. */
interface LastPaid {
  signature: string;
  /** The cumulative charge the voucher signed (a copy with another amount is another, forged, voucher). */
  cumulative: string;
  fingerprint: string;
  status: number;
  kept: string | null;
  settle: SettleResponse;
}

/** The object's synchronous storage, as the serve path uses it. */
export interface ServeStore {
  kv: SyncKvStorage;
  /** Called before a channel's record is first stored, and after it is deleted. */
  onCreate(channelId: string): Promise<void>;
  onDelete(channelId: string): Promise<void>;
  /** Records for the read model, kept until landed (`unsent:<n>`), flushed by the object's alarm. */
  keep(records: PaymentRecord[]): void;
}

const parse = (value: string | undefined): Channel | undefined =>
  value === undefined ? undefined : (JSON.parse(value) as Channel);

/**
 * The scheme's `ChannelStorage` over the object's own record: the object holds one channel, and every call runs
 * within its turn, so a read and the write after it see no other call in between.
 */
class OwnRecord implements ChannelStorage {
  private readonly store: ServeStore;

  constructor(store: ServeStore) {
    this.store = store;
  }

  async get(channelId: string): Promise<Channel | undefined> {
    const channel = parse(this.store.kv.get<string>("record"));
    return channel && channel.channelId.toLowerCase() === channelId.toLowerCase() ? channel : undefined;
  }

  async list(): Promise<Channel[]> {
    const channel = parse(this.store.kv.get<string>("record"));
    return channel ? [channel] : [];
  }

  async updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    const current = await this.get(channelId);
    const next = update(current);
    if (next === current) return { channel: current, status: "unchanged" };
    if (next === undefined) {
      if (current) this.store.kv.put("closed", JSON.stringify(current));
      this.store.kv.delete("record");
      await this.store.onDelete(channelId.toLowerCase());
      return { channel: undefined, status: "deleted" };
    }
    if (current === undefined) await this.store.onCreate(channelId.toLowerCase());
    this.store.kv.put("record", JSON.stringify(next));
    return { channel: next, status: "updated" };
  }
}

/** The facilitator for deposits, refunds and a voucher the scheme cannot check locally; its kinds known without asking. */
function facilitatorAt(url: string, requirements: PaymentRequirements): FacilitatorClient {
  const http = new HTTPFacilitatorClient({ url });
  // A verdict sent with a 4xx status is a refusal, as over HTTP (src/gateway/x402/facilitators.ts); a 5xx stays an error.
  const refusedBy = (err: unknown) =>
    (err instanceof VerifyError || err instanceof SettleError) && err.statusCode < 500 ? err : undefined;
  return {
    verify: (p, r) =>
      http.verify(p, r).catch((err: unknown) => {
        const refused = refusedBy(err);
        if (!refused) throw err;
        return { isValid: false, invalidReason: (refused as VerifyError).invalidReason ?? "verification_refused" };
      }),
    settle: (p, r) =>
      http.settle(p, r).catch((err: unknown) => {
        const refused = refusedBy(err);
        if (!refused) throw err;
        const reason = (refused as SettleError).errorReason ?? "settlement_refused";
        return { success: false, errorReason: reason, transaction: "", network: r.network };
      }),
    getSupported: async () => ({
      kinds: [{ x402Version: 2, scheme: requirements.scheme, network: requirements.network }],
      extensions: [],
      signers: {},
    }),
  };
}

/** The scheme's resource server for the object, built on its first call and kept while the object lives. */
export async function resourceServer(store: ServeStore, req: ServeRequest, authorizerKey: Hex) {
  const scheme = new BatchSettlementEvmScheme(req.requirements.payTo as Hex, {
    storage: new OwnRecord(store),
    receiverAuthorizerSigner: privateKeyToAccount(authorizerKey),
    withdrawDelay: Number(req.requirements.extra?.withdrawDelay ?? 900),
    // The paywall's least deposit (the 402's `extra.minDeposit`) is a rule, not a hint.
    enforceMinDeposit: true,
  });
  const server = new x402ResourceServer(facilitatorAt(req.facilitatorUrl, req.requirements)).register(
    req.requirements.network as `${string}:${string}`,
    scheme,
  );
  await server.initialize();
  return server;
}

type Raw = { type?: string; voucher?: { channelId?: string; maxClaimableAmount?: string; signature?: string } };

/** The event id of a committed call: the channel and its cumulative charge, so a record landing twice lands once. */
const committedEventId = async (channelId: string, cumulative: string) =>
  `evt_${await sha256Hex(`${channelId.toLowerCase()}:${cumulative}`)}`;

/**
 * One paid call on the channel: the scheme verifies the payload (a voucher of an EOA payer locally; a deposit or a
 * refund at the facilitator) and reserves the charge, `forward()` calls the upstream, and the charge is committed only
 * when it answered below 400; else the reservation is cleared and the channel is exactly as it was.
 */
export async function serveCall(
  store: ServeStore,
  server: x402ResourceServer,
  req: ServeRequest,
  forward: () => Promise<ForwardResult>,
): Promise<Served> {
  const { kv } = store;
  const meta = kv.get<ChannelMeta>("meta");
  if (meta && (meta.tenantId !== req.meta.tenantId || meta.paywallId !== req.meta.paywallId)) {
    return { kind: "refused", reason: "This channel was opened for another paywall: open a channel for this one" };
  }
  const raw = req.payload.payload as Raw;
  const last = kv.get<LastPaid>("last");
  // A refund signs the same voucher as the last paid call (the charge does not move): never taken for its resend.
  if (
    last &&
    raw.type === "voucher" &&
    raw.voucher?.signature === last.signature &&
    raw.voucher?.maxClaimableAmount === last.cumulative &&
    last.fingerprint === req.fingerprint
  ) {
    return { kind: "kept", kept: last.kept, status: last.status, settle: last.settle };
  }

  // The record as it was: a call the upstream failed leaves it so (the scheme's cancel clears its reservation only).
  const before = kv.get<string>("record");
  const verified = await server.verifyPayment(req.payload, req.requirements);
  if (!verified.isValid) return refused(server, req, verified.invalidReason ?? "invalid_payment");
  if (verified.skipHandler) {
    // The scheme throws its reason when a refund cannot be settled (nothing left to refund, the channel gone).
    const settle = await server.settlePayment(req.payload, req.requirements).catch((err: unknown) => ({
      success: false as const,
      errorReason: err instanceof Error && /^invalid_[a-z0-9_]+$/.test(err.message) ? err.message : "refund_failed",
    }));
    if (!settle.success) {
      if (before !== undefined) kv.put("record", before);
      return refused(server, req, settle.errorReason ?? "refund_failed");
    }
    return { kind: "refunded", settle: settle as SettleResponse, body: verified.skipHandler.body ?? {} };
  }

  let answered: ForwardResult;
  try {
    answered = await forward();
  } catch {
    answered = { status: 502, kept: null };
  }
  // The channel exactly as it was before this call (the scheme's cancel clears its reservation only).
  const restore = async () => {
    if (before !== undefined) kv.put("record", before);
    else if (kv.get("record") !== undefined) {
      kv.delete("record");
      await store.onDelete(raw.voucher?.channelId?.toLowerCase() ?? "");
    }
  };
  if (answered.status >= 400) {
    await server.createPaymentCancellationDispatcher(req.payload, req.requirements).cancel({
      reason: "handler_failed",
      responseStatus: answered.status,
    });
    await restore();
    store.keep([{ kind: "event", row: errorEvent(meta ?? { ...req.meta, openedAt: Date.now() }, answered.status) }]);
    return { kind: "unpaid" };
  }
  const settle = await server.settlePayment(req.payload, req.requirements);
  if (!settle.success) {
    await restore();
    return refused(server, req, settle.errorReason ?? "settlement_failed");
  }
  const bound = meta ?? { ...req.meta, openedAt: Date.now() };
  if (!meta) kv.put("meta", bound);
  kv.put("last", {
    signature: raw.voucher?.signature ?? "",
    cumulative: raw.voucher?.maxClaimableAmount ?? "",
    fingerprint: req.fingerprint,
    status: answered.status,
    kept: answered.kept,
    settle,
  } satisfies LastPaid);
  const channel = parse(kv.get<string>("record"));
  if (channel) store.keep(await committedRecords(kv, bound, channel, req.requirements.amount, answered.status));
  return { kind: "answered", settle };
}

async function refused(server: x402ResourceServer, req: ServeRequest, reason: string): Promise<Served> {
  const required = await server.createPaymentRequiredResponse(
    [req.requirements],
    { url: "" },
    reason,
    undefined,
    undefined,
    req.payload,
  );
  const accepts = required.accepts[0];
  return { kind: "refused", reason, ...(accepts ? { accepts } : {}) };
}

const errorEvent = (meta: ChannelMeta, status: number): NewEvent => ({
  id: newId("evt"),
  tenantId: meta.tenantId,
  paywallId: meta.paywallId,
  serviceId: meta.serviceId,
  eventType: "ERROR",
  statusCode: status,
  amount: null,
  metadata: { reason: `upstream answered ${status}; nothing charged` },
  createdAt: new Date(),
});

/** A committed call's records: its SUCCESS event and the channel's row as it is now (`seq`: the object's moves). */
async function committedRecords(
  kv: SyncKvStorage,
  meta: ChannelMeta,
  channel: Channel,
  price: string,
  status: number,
): Promise<PaymentRecord[]> {
  const moves = (kv.get<number>("moves") ?? 0) + 1;
  kv.put("moves", moves);
  const now = new Date();
  const cumulative = channel.chargedCumulativeAmount;
  const event: NewEvent = {
    id: await committedEventId(channel.channelId, cumulative),
    tenantId: meta.tenantId,
    paywallId: meta.paywallId,
    serviceId: meta.serviceId,
    eventType: "SUCCESS",
    statusCode: status,
    amount: price,
    metadata: { channelId: channel.channelId.toLowerCase(), cumulative },
    createdAt: now,
  };
  return [
    { kind: "event", row: event },
    { kind: "channel", row: channelRow(kv, meta, channel, moves, now) },
  ];
}

/** The channel's read-model row (src/db/schema.ts `channels`). */
export function channelRow(kv: SyncKvStorage, meta: ChannelMeta, channel: Channel, seq: number, now: Date): NewChannel {
  return {
    id: channel.channelId.toLowerCase(),
    tenantId: meta.tenantId,
    paywallId: meta.paywallId,
    serviceId: meta.serviceId,
    protocol: "x402",
    network: meta.network,
    currency: meta.currency,
    payerAddress: channel.channelConfig.payer.toLowerCase(),
    deposit: channel.balance,
    charged: channel.chargedCumulativeAmount,
    claimed: channel.totalClaimed,
    settled: kv.get<string>("settled") ?? "0",
    status: channel.withdrawRequestedAt > 0 ? "CLOSING" : "OPEN",
    seq,
    openedAt: new Date(meta.openedAt),
    lastCallAt: new Date(channel.lastRequestTimestamp),
    updatedAt: now,
  };
}
