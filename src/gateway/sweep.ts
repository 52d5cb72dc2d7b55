import { completePayment, failPayment, type PaymentRef } from "../core/ledger/ledger.ts";
import type { NetworkId } from "../core/money/networks.ts";
import type { Outbox } from "../core/webhooks/outbox.ts";
import { getDb } from "../db/client.ts";
import { findPendingPayments, notePaymentsChecked, type PendingPayment } from "../db/ledger.ts";
import type { NewTransaction } from "../db/transactions.ts";
import { CHAIN_UNREACHABLE, type ChainOutcome, paymentChainOutcome } from "./chain-outcome.ts";
import { sendSweepSettlement } from "./x402/sweep-settlement.ts";

/**
 * wrangler.toml's every-five-minutes Cron Trigger, which runs the sweep (src/index.ts `scheduled`; the Worker's
 * main module may export handlers only, so the name lives here).
 */
export const PAYMENT_SWEEP_CRON = "*/5 * * * *";

/** A payment younger than this is left to the request that started it (its upstream call may still run). */
export const SWEEP_MIN_AGE_MS = 60_000;
/** Payments looked at per run (each costs one to three RPC calls), least recently checked first. */
export const SWEEP_BATCH = 100;
/** Wall time after which a run takes no more payments (each RPC call may take 10 s, retried once): the rest wait. */
export const SWEEP_DEADLINE_MS = 60_000;
/** A network whose RPC could not be reached this many times in a run is not asked again in that run. */
export const SWEEP_RPC_FAILURES = 2;
/**
 * An x402 payment the sweep settles itself must stay valid this much longer (the facilitator's timeout, as the request
 * keeps): closer to its expiry it is left to expire unpaid.
 */
export const SWEEP_SETTLE_MARGIN_MS = 30_000;
/** A payment the sweep asked about this many times (an hour at one run every 5 minutes) is logged as needing attention. */
export const SWEEP_ATTENTION_ATTEMPTS = 12;

export interface SweepResult {
  checked: number;
  completed: number;
  failed: number;
  /** Still PENDING: not seen on chain yet and still able to move, or the chain did not answer. */
  pending: number;
  /** The outcome could not be recorded (logged; the next run tries again). */
  errors: number;
  /** Not asked this run: the run's deadline passed, or its network's RPC failed repeatedly (the next run asks). */
  deferred: number;
}

/**
 * The Cron sweep (src/index.ts `scheduled`): settles the gateway's PENDING payments that their request left behind
 * (a settlement whose answer was lost, an invocation that ended early) from the chain, the way the request path
 * does (./chain-outcome.ts): x402 by the authorization's `authorizationState` and `validBefore`, MPP by its
 * transaction's receipt and `validBefore`. A payment that can no longer move money (never sent, expired) ends
 * FAILED with the reason. Each outcome is the ledger's own move (`completePayment`, `failPayment`); one the request
 * recorded meanwhile is left as it is. The outcome of a payment whose paywall was deleted is recorded all the same.
 * An x402 payment whose upstream answered (its answer kept) and whose request died before recording any outcome is
 * settled here while its authorization is valid (./x402/sweep-settlement.ts), then read from the chain: the buyer's
 * resend gets the kept answer. Without a kept answer nothing is settled: such a payment expires unpaid.
 *
 * A run takes the least recently checked payments first and sends each one it leaves PENDING to the back of the
 * queue (`checked_at`, `attempts`), so payments that stay unknown cannot starve newer ones. It stops taking payments
 * after `deadlineMs` of wall time, and skips a network whose RPC failed `SWEEP_RPC_FAILURES` times in the run.
 */
export async function sweepPendingPayments(
  env: Env,
  now: Date,
  deadlineMs = SWEEP_DEADLINE_MS,
  outbox?: Outbox,
): Promise<SweepResult> {
  const started = Date.now();
  const db = getDb(env.DB);
  const rows = await findPendingPayments(db, new Date(now.getTime() - SWEEP_MIN_AGE_MS), SWEEP_BATCH);
  const result: SweepResult = { checked: 0, completed: 0, failed: 0, pending: 0, errors: 0, deferred: 0 };
  const rpcFailures = new Map<string, number>();
  const stillPending: string[] = [];
  for (const row of rows) {
    const { transaction: t } = row;
    if (Date.now() - started >= deadlineMs || (rpcFailures.get(t.network) ?? 0) >= SWEEP_RPC_FAILURES) {
      result.deferred++;
      continue;
    }
    result.checked++;
    const outcome = await sweptOutcome(env, row, now);
    if (outcome.status === "UNKNOWN") {
      result.pending++;
      stillPending.push(t.id);
      if (outcome.reason === CHAIN_UNREACHABLE) rpcFailures.set(t.network, (rpcFailures.get(t.network) ?? 0) + 1);
      if (row.pending.attempts + 1 >= SWEEP_ATTENTION_ATTEMPTS) needsAttention(row, outcome.reason);
      continue;
    }
    const moved = await recordSwept(db, t, outcome, outbox);
    if (moved) result[moved]++;
  }
  await notePaymentsChecked(db, stillPending, now);
  return result;
}

type PendingRow = Awaited<ReturnType<typeof findPendingPayments>>[number];

/** A PENDING payment as a sweep sees it: this Cron sweep's rows, or a payment's own object (./coordinator.ts). */
export interface SweptPayment {
  transaction: Pick<NewTransaction, "tenantId" | "network" | "protocol" | "payerAddress" | "amount">;
  pending: PendingPayment;
  /** The upstream's answer is kept for it. */
  answerKept: boolean;
  /** Its request recorded an outcome (the settlement's unknown one). */
  requestFinished: boolean;
}

/**
 * Where a PENDING payment stands on chain. Its upstream answered and the answer is kept, its request died before
 * recording an outcome, and the buyer's authorization is unused and valid long enough to settle: the sweep settles
 * it, then reads the chain again. The Cron sweep and a payment's own object (its alarm) both decide here.
 */
export async function sweptOutcome(
  env: Env,
  { pending, transaction: t, answerKept, requestFinished }: SweptPayment,
  now: Date,
): Promise<ChainOutcome> {
  const x402Outcome = () => paymentChainOutcome(env, t, pending, now);
  const outcome = await x402Outcome();
  const settleable = outcome.status === "UNKNOWN" && outcome.unused && answerKept && !requestFinished;
  if (!settleable || !pending.settlement || pending.validBefore.getTime() - now.getTime() <= SWEEP_SETTLE_MARGIN_MS) {
    return outcome;
  }
  await sendSweepSettlement(env, t.tenantId, pending.reference, pending.settlement).catch(() => {});
  return x402Outcome();
}

/** A payment the sweep asked about `SWEEP_ATTENTION_ATTEMPTS` times, logged. */
function needsAttention({ pending, transaction: t }: PendingRow, reason: string): void {
  const line = { gateway: "payment-needs-attention", transactionId: t.id, network: t.network, attempts: pending.attempts + 1 };
  console.warn(JSON.stringify({ ...line, since: t.createdAt, reason }));
}

/** The chain's outcome as the ledger's own move; one the request recorded meanwhile is left as it is. */
async function recordSwept(
  db: ReturnType<typeof getDb>,
  t: PendingRow["transaction"],
  outcome: Exclude<ChainOutcome, { status: "UNKNOWN" }>,
  outbox: Outbox | undefined,
): Promise<"completed" | "failed" | "errors" | undefined> {
  // The transaction keeps its paywall's ids, so a deleted paywall's payment is recorded all the same.
  const ref: PaymentRef = {
    transactionId: t.id,
    tenantId: t.tenantId,
    paywallId: t.paywallId,
    serviceId: t.serviceId,
    protocol: t.protocol,
    network: t.network as NetworkId,
    amount: t.amount,
  };
  const bySweep = { statusCode: null, responseTime: null, settledBy: "sweep" } as const;
  try {
    const moved =
      outcome.status === "COMPLETED"
        ? await completePayment(db, ref, outcome.txHash, bySweep, undefined, outbox)
        : await failPayment(db, ref, outcome.reason, bySweep, outbox);
    if (!moved) return undefined;
    return outcome.status === "COMPLETED" ? "completed" : "failed";
  } catch {
    return "errors";
  }
}
