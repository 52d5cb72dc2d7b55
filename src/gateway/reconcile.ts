import { getDb } from "../db/client.ts";
import { findPendingPayments } from "../db/gateway.ts";
import { recordPaymentOutcome } from "../ingest/ingest.ts";
import { networkTable } from "../lib/network-table.ts";
import type { NetworkId } from "../lib/networks.ts";
import { type ChainOutcome, tempoChainOutcome, x402ChainOutcome } from "./chain-outcome.ts";
import { outcomeEventIdOf } from "./payment-id.ts";

/**
 * wrangler.toml's every-five-minutes Cron Trigger, which runs the sweep (src/index.ts `scheduled`; the Worker's
 * main module may export handlers only, so the name lives here).
 */
export const PAYMENT_SWEEP_CRON = "*/5 * * * *";

/** A payment younger than this is left to the request that started it (its upstream call may still run). */
export const SWEEP_MIN_AGE_MS = 60_000;
/** Payments looked at per run (each costs one to three RPC calls), oldest first. */
export const SWEEP_BATCH = 100;

export interface SweepResult {
  checked: number;
  completed: number;
  failed: number;
  /** Still PENDING: not seen on chain yet and still able to move, or the chain did not answer. */
  pending: number;
  /** The outcome could not be recorded (logged; the next run tries again). */
  errors: number;
}

/**
 * The Cron sweep (src/index.ts `scheduled`): settles the gateway's PENDING payments that their request left behind
 * (a settlement whose answer was lost, an invocation that ended early) from the chain, the way the request path
 * does (./chain-outcome.ts): x402 by the authorization's `authorizationState` and `validBefore`, MPP by its
 * transaction's receipt and `validBefore`. A payment that can no longer move money (never sent, expired) ends
 * FAILED with the reason. Each outcome is one batch with its event (`recordPaymentOutcome`); one the request
 * recorded meanwhile is left as it is.
 */
export async function sweepPendingPayments(env: Env, now: Date): Promise<SweepResult> {
  const db = getDb(env.DB);
  const table = networkTable(env);
  const rows = await findPendingPayments(db, new Date(now.getTime() - SWEEP_MIN_AGE_MS), SWEEP_BATCH);
  const result: SweepResult = { checked: rows.length, completed: 0, failed: 0, pending: 0, errors: 0 };
  for (const { pending, transaction: t, paywall } of rows) {
    const entry = table[t.network as NetworkId];
    const outcome: ChainOutcome = !entry
      ? { status: "UNKNOWN", reason: "the network is not in the network table" }
      : t.protocol === "x402"
        ? await x402ChainOutcome(
            entry.rpcUrl,
            {
              asset: pending.asset as `0x${string}`,
              payer: (t.payerAddress ?? "") as `0x${string}`,
              nonce: pending.reference as `0x${string}`,
              validBefore: pending.validBefore,
              payTo: pending.payTo as `0x${string}`,
              amount: t.amount,
            },
            now,
          )
        : await tempoChainOutcome(
            entry.rpcUrl,
            { hash: pending.reference as `0x${string}`, validBefore: pending.validBefore },
            now,
          );
    if (outcome.status === "UNKNOWN") {
      result.pending++;
      continue;
    }
    const base = { id: outcomeEventIdOf(t.id), paywallId: paywall.id, statusCode: null, responseTime: null };
    const [settlement, event] =
      outcome.status === "COMPLETED"
        ? [
            { status: "COMPLETED", txHash: outcome.txHash },
            {
              ...base,
              eventType: "SUCCESS",
              amount: t.amount,
              metadata: { protocol: t.protocol, network: t.network, settledBy: "sweep" },
            },
          ]
        : [
            { status: "FAILED", failureReason: outcome.reason },
            { ...base, eventType: "ERROR", metadata: { protocol: t.protocol, reason: outcome.reason, settledBy: "sweep" } },
          ];
    try {
      const recorded = await recordPaymentOutcome(db, paywall, t.id, settlement, event);
      if (recorded.ok) result[outcome.status === "COMPLETED" ? "completed" : "failed"]++;
      else if (recorded.code !== "CONFLICT") result.errors++;
    } catch {
      result.errors++;
    }
  }
  return result;
}
