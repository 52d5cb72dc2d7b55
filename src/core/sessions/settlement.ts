// Sessions' settlement in batches (docs/sessions.md, "Settlement and refunds"): one run per receiver and network, from
// the alarm of the scope's index object (`index:<network>:<receiver>`), every SESSION_SETTLE_INTERVAL_SECONDS while
// it lists a channel. The run is `@x402/evm`'s own channel manager over the Durable Object channel storage: every
// voucher charged since the last run claimed in one transaction, the claimed funds sent to the receiver in one settle
// transfer, then channels unused for SESSION_IDLE_REFUND_SECONDS refunded (the rest of their deposit back to their
// buyer). Each settled channel's object then keeps the settlement's records for the read model.
import { HTTPFacilitatorClient } from "@x402/core/server";
import { BatchSettlementEvmScheme, type Channel } from "@x402/evm/batch-settlement/server";
import { getAddress, type Hex, isAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PaymentRecord } from "../../db/ledger.ts";
import { sha256Hex } from "../../lib/ids.ts";
import { getConfig } from "../config.ts";
import { caip2, networkOfCaip2, networkTable } from "../money/network-table.ts";
import { modeOfNetwork } from "../money/networks.ts";
import { transactionDeliveryIdPrefix } from "../webhooks/events.ts";
import { channelInScope, DurableChannelStorage } from "./channel-storage.ts";
import { type ChannelMeta, channelRow } from "./serve.ts";

/** An index object's scope (`index:<CAIP-2 network>:<receiver>`, channel-storage.ts): its network and receiver. */
const scopeOf = (name: string) => {
  const scope = name.slice("index:".length);
  const cut = scope.lastIndexOf(":");
  return { scope, network: scope.slice(0, cut), receiver: scope.slice(cut + 1) };
};

/** One settlement as a channel's object is told it: the channel's claimed total it moved, and the settle transfer. */
export interface SettledChannel {
  /** Its claimed total on chain; absent for a closed channel: all it was charged (its refund claimed it). */
  claimed?: string;
  txHash: string;
  at: number;
}

/** The settlement transaction of a channel's claimed total: one id per channel and total, whoever records it. */
export const settlementTransactionId = async (channelId: string, claimed: string) =>
  `txn_x402_${(await sha256Hex(`channel|${channelId.toLowerCase()}|${BigInt(claimed)}`)).slice(0, 40)}`;

/** The index object's next run, SESSION_SETTLE_INTERVAL_SECONDS from now. */
export const nextSettlementAt = (env: object) => Date.now() + getConfig(env).sessions.settleIntervalSeconds * 1000;

/**
 * The alarm of the index object `name`: one settlement run, then the next one armed while it lists a channel. A run
 * that failed is the next one's to finish (what it claimed is settled then); its error's name alone is logged.
 */
export async function settlementAlarm(env: Env, storage: DurableObjectStorage, name: string): Promise<void> {
  await runSettlement(env, storage, name).catch((err: unknown) => {
    console.warn(JSON.stringify({ sessions: "settlement-failed", error: err instanceof Error ? err.name : "unknown" }));
  });
  const listed = (prefix: string) => [...storage.kv.list({ prefix, limit: 1 })].length > 0;
  if (listed("id:") || listed("closed:")) await storage.setAlarm(nextSettlementAt(env));
}

/**
 * A settlement's records for a channel's object (its outbox keeps them until they land), or `null` when this
 * settlement (or a later one) is already recorded, or the channel has no record or `meta`: the same settlement told
 * twice is recorded once. Per settlement one COMPLETED `transaction` (its amount what this settlement moved for the
 * channel, its webhook `transaction.completed`) and the channel's row with its new claimed and settled totals.
 */
export async function settlementRecords(storage: DurableObjectStorage, settled: SettledChannel): Promise<PaymentRecord[] | null> {
  const record = storage.kv.get<string>("record") ?? storage.kv.get<string>("closed");
  if (!record) return null;
  const channel = JSON.parse(record) as Channel;
  const total = settled.claimed ?? channel.chargedCumulativeAmount;
  const id = await settlementTransactionId(channel.channelId, total);
  return storage.transactionSync(() => {
    const kv = storage.kv;
    const meta = kv.get<ChannelMeta>("meta");
    const before = BigInt(kv.get<string>("settled") ?? "0");
    const claimed = BigInt(total);
    if (!meta || claimed <= before) return null;
    const at = new Date(settled.at);
    const moves = (kv.get<number>("moves") ?? 0) + 1;
    kv.put("moves", moves);
    kv.put("settled", claimed.toString());
    const channelId = channel.channelId.toLowerCase();
    return [
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
          payerAddress: channel.channelConfig.payer.toLowerCase(),
          txHash: settled.txHash,
          channelId,
          createdAt: at,
          settledAt: at,
        },
        webhook: { type: "transaction.completed", idPrefix: transactionDeliveryIdPrefix(id, "transaction.completed"), at },
      },
      {
        kind: "channel",
        row: {
          ...channelRow(kv, meta, channel, moves, at),
          // A closed channel's (its record gone with its refund): all it was charged is claimed, and it stays closed.
          ...(kv.get("record") === undefined ? { claimed: claimed.toString(), status: "CLOSED" as const } : {}),
        },
      },
    ];
  });
}

/**
 * One settlement run of the index object named `name` (`index:<network>:<receiver>`), whose storage is `storage`:
 * the channel manager's `claimAndSettle()` (claims in one transaction, one settle transfer), each settled channel's
 * records kept in its object and sent to the payment-records queue, then `refundIdleChannels`. A settle that failed
 * after its claims landed is sent by the next run (`unsettled`). Nothing to claim: no transaction, no record.
 */
export async function runSettlement(env: Env, storage: DurableObjectStorage, name: string): Promise<void> {
  const { scope, network, receiver } = scopeOf(name);
  const table = networkTable(env);
  const id = networkOfCaip2(table, Object.keys(table), network);
  const entry = id ? table[id] : undefined;
  const mode = id ? modeOfNetwork(id) : undefined;
  const key = getConfig(env).sessionAuthorizerKey;
  if (entry?.kind !== "evm" || !mode || !key || !isAddress(receiver)) return;
  const channels = new DurableChannelStorage(env.CHANNELS, scope);
  const scheme = new BatchSettlementEvmScheme(getAddress(receiver), {
    storage: channels,
    receiverAuthorizerSigner: privateKeyToAccount(key as Hex),
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
    const closed = Array.from(storage.kv.list({ prefix: "closed:" }), ([key]) => key.slice("closed:".length));
    const object = (id: string) => env.CHANNELS.getByName(channelInScope(scope, id));
    // Each channel's object keeps its settlement's records until they land (its own alarm sends them).
    await Promise.all([
      ...claimed.map((c) => object(c.channelId).settled({ claimed: c.totalClaimed, txHash, at })),
      ...closed.map((id) => object(id).settled({ txHash, at })),
    ]);
    for (const id of closed) storage.kv.delete(`closed:${id}`);
  }
  await manager.refundIdleChannels({ idleSecs: getConfig(env).sessions.idleRefundSeconds });
}
