// Sessions' settlement in batches (docs/sessions.md, "Settlement and refunds"): one run per receiver and network, from
// the alarm of the scope's index object (`index:<network>:<receiver>`), every SESSION_SETTLE_INTERVAL_SECONDS while
// it lists a channel. The run is `@x402/evm`'s own channel manager over the Durable Object channel storage: every
// voucher charged since the last run claimed in one transaction, the claimed funds sent to the receiver in one settle
// transfer, then channels unused for SESSION_IDLE_REFUND_SECONDS refunded (the rest of their deposit back to their
// buyer). Each settled channel's object then keeps the settlement's records for the read model.
import { HTTPFacilitatorClient } from "@x402/core/server";
import { BatchSettlementEvmScheme, type Channel } from "@x402/evm/batch-settlement/server";
import { getAddress, isAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PaymentRecord } from "../../db/ledger.ts";
import type { NewChannel, Token } from "../../db/schema.ts";
import { sha256Hex } from "../../lib/ids.ts";
import { getConfig } from "../config.ts";
import { type RecordsMessage, storeRecord } from "../ledger/payment-object.ts";
import { caip2, networkTable } from "../money/network-table.ts";
import { modeOfNetwork, type NetworkId } from "../money/networks.ts";
import { transactionDeliveryIdPrefix } from "../webhooks/events.ts";
import { DurableChannelStorage } from "./channel-storage.ts";

/** The scope of a receiver's channels on a network (lower-case address), as channel-storage.ts names its objects. */
export const settlementScope = (network: string, receiver: string) => `${network}:${receiver.toLowerCase()}`;

/** The object of a channel of `scope` (channel-storage.ts's name for it). */
const channelObjectName = (scope: string, channelId: string) => `channel:${scope}:${channelId.toLowerCase()}`;

/** What the deposit bound a channel to (its object's `meta` key). */
export interface ChannelMeta {
  tenantId: string;
  paywallId: string;
  serviceId: string | null;
  network: string;
  currency: Token;
  openedAt: number;
}

/** One settlement as a channel's object is told it: the channel's claimed total it moved, and the settle transfer. */
export interface SettledChannel {
  claimed: string;
  txHash: string;
  at: number;
}

/** The settlement transaction of a channel's claimed total: one id per channel and total, whoever records it. */
export const settlementTransactionId = async (channelId: string, claimed: string) =>
  `txn_x402_${(await sha256Hex(`channel|${channelId.toLowerCase()}|${BigInt(claimed)}`)).slice(0, 40)}`;

/** The receiver authorizer's key (a secret: never logged, never returned), or `undefined` when sessions are off. */
const authorizerKey = (env: object): `0x${string}` | undefined => {
  const key = (env as { SESSION_AUTHORIZER_KEY?: string }).SESSION_AUTHORIZER_KEY;
  return key && /^0x[0-9a-fA-F]{64}$/.test(key) ? (key as `0x${string}`) : undefined;
};

/** The index object's next run, SESSION_SETTLE_INTERVAL_SECONDS from now. */
const nextRunAt = (env: object) => Date.now() + getConfig(env).sessions.settleIntervalSeconds * 1000;

/** Of an index object listing a channel: its settlement runs, unless they already do. */
export async function armSettlement(env: object, storage: DurableObjectStorage): Promise<void> {
  if ((await storage.getAlarm()) === null) await storage.setAlarm(nextRunAt(env));
}

/**
 * The alarm of the index object `name`: one settlement run, then the next one armed while it lists a channel. A run
 * that failed is the next one's to finish (what it claimed is settled then); its error's name alone is logged.
 */
export async function settlementAlarm(env: Env, storage: DurableObjectStorage, name: string): Promise<void> {
  await runSettlement(env, storage, name).catch((err: unknown) => {
    console.warn(JSON.stringify({ sessions: "settlement-failed", error: err instanceof Error ? err.name : "unknown" }));
  });
  if ([...storage.kv.list({ prefix: "id:", limit: 1 })].length > 0) await storage.setAlarm(nextRunAt(env));
}

/**
 * Keeps a settlement's records in a channel object's outbox (`unsent:<n>`, until the consumer reports them landed:
 * `recordsLanded`) and returns them as the message that carries them, or `null` when this settlement (or a later one)
 * is already recorded, or the channel has no record or `meta`: the same settlement told twice is recorded once.
 * Per settlement one COMPLETED `transaction` (its amount what this settlement moved for the channel, its webhook
 * `transaction.completed`) and the channel's row with its new claimed and settled totals.
 */
export async function keepSettlementRecords(
  storage: DurableObjectStorage,
  objectName: string,
  settled: SettledChannel,
): Promise<RecordsMessage | null> {
  const record = storage.kv.get<string>("record");
  if (!record) return null;
  const channel = JSON.parse(record) as Channel;
  const id = await settlementTransactionId(channel.channelId, settled.claimed);
  return storage.transactionSync(() => {
    const meta = storage.kv.get<ChannelMeta>("meta");
    const before = BigInt(storage.kv.get<string>("settled") ?? "0");
    const claimed = BigInt(settled.claimed);
    if (!meta || claimed <= before) return null;
    const at = new Date(settled.at);
    const seq = (storage.kv.get<number>("seq") ?? 0) + 1;
    const channelId = channel.channelId.toLowerCase();
    const payer = channel.channelConfig.payer;
    const records: PaymentRecord[] = [
      {
        kind: "transaction",
        row: {
          id,
          tenantId: meta.tenantId,
          paywallId: meta.paywallId,
          serviceId: meta.serviceId,
          protocol: "x402",
          network: meta.network,
          amount: (claimed - before).toString(),
          currency: meta.currency,
          status: "COMPLETED",
          payerAddress: payer,
          txHash: settled.txHash,
          channelId,
          createdAt: at,
          settledAt: at,
        },
        webhook: { type: "transaction.completed", idPrefix: transactionDeliveryIdPrefix(id, "transaction.completed"), at },
      },
      { kind: "channel", row: channelRow(channel, meta, { claimed, seq, at }) },
    ];
    let n = storage.kv.get<number>("recordSeq") ?? 1;
    const seqs: number[] = [];
    const stored: string[] = [];
    for (const r of records) {
      const text = storeRecord(r);
      storage.kv.put(`unsent:${n}`, text);
      seqs.push(n++);
      stored.push(text);
    }
    storage.kv.put("recordSeq", n);
    storage.kv.put("seq", seq);
    storage.kv.put("settled", claimed.toString());
    return { transactionId: channelId, seqs, records: stored, channel: objectName };
  });
}

/** The channel's read-model row once `claimed` (its total claimed on chain) is settled. */
function channelRow(channel: Channel, meta: ChannelMeta, now: { claimed: bigint; seq: number; at: Date }): NewChannel {
  return {
    id: channel.channelId.toLowerCase(),
    tenantId: meta.tenantId,
    paywallId: meta.paywallId,
    serviceId: meta.serviceId,
    protocol: "x402",
    network: meta.network,
    currency: meta.currency,
    payerAddress: channel.channelConfig.payer,
    deposit: channel.balance,
    charged: channel.chargedCumulativeAmount,
    claimed: now.claimed.toString(),
    settled: now.claimed.toString(),
    status: channel.withdrawRequestedAt > 0 ? "CLOSING" : "OPEN",
    seq: now.seq,
    openedAt: new Date(meta.openedAt),
    lastCallAt: new Date(channel.lastRequestTimestamp),
    updatedAt: now.at,
  };
}

/**
 * One settlement run of the index object named `name` (`index:<network>:<receiver>`), whose storage is `storage`:
 * the channel manager's `claimAndSettle()` (claims in one transaction, one settle transfer), each settled channel's
 * records kept in its object and sent to the payment-records queue, then `refundIdleChannels`. A settle that failed
 * after its claims landed is sent by the next run (`unsettled`). Nothing to claim: no transaction, no record.
 */
export async function runSettlement(env: Env, storage: DurableObjectStorage, name: string): Promise<void> {
  const [, network = "", receiver = ""] = name.split(":");
  const entry = networkTable(env)[network as NetworkId];
  const mode = modeOfNetwork(network);
  const key = authorizerKey(env);
  if (entry?.kind !== "evm" || !mode || !key || !isAddress(receiver)) return;
  const scope = settlementScope(network, receiver);
  const channels = new DurableChannelStorage(env.CHANNELS, scope);
  const scheme = new BatchSettlementEvmScheme(getAddress(receiver), {
    storage: channels,
    receiverAuthorizerSigner: privateKeyToAccount(key),
  });
  const facilitator = new HTTPFacilitatorClient({ url: getConfig(env).facilitatorUrl[mode] });
  const manager = scheme.createChannelManager(facilitator, caip2(entry), entry.asset);

  if ((await manager.getClaimableVouchers()).length > 0) storage.kv.put("unsettled", 1);
  let txHash = (await manager.claimAndSettle()).settle?.transaction;
  if (!txHash && storage.kv.get("unsettled")) txHash = (await manager.settle()).transaction;
  if (txHash) {
    storage.kv.delete("unsettled");
    const at = Date.now();
    const claimed = (await channels.list()).filter((c) => BigInt(c.totalClaimed) > 0n);
    const messages = await Promise.all(
      claimed.map((c) =>
        env.CHANNELS.getByName(channelObjectName(scope, c.channelId)).settled({ claimed: c.totalClaimed, txHash, at }),
      ),
    );
    // Kept in each object until reported landed, so a send lost here is only later (the object's own flush).
    await Promise.all(messages.flatMap((m) => (m ? [env.PAYMENT_RECORDS_QUEUE.send(m).catch(() => {})] : [])));
  }
  await manager.refundIdleChannels({ idleSecs: getConfig(env).sessions.idleRefundSeconds });
}
