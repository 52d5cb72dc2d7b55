import { type LeftByRequest, PaymentObject } from "../core/ledger/payment-object.ts";
import type { PendingPayment } from "../db/ledger.ts";
import type { NewTransaction } from "../db/transactions.ts";
import { SWEEP_MIN_AGE_MS, sweptOutcome } from "./sweep.ts";

/**
 * One object per payment in flight (named by its transaction id): where copies of a payment wait for the request that
 * owns it. The ledger's `start` decides the owner; once the owner has recorded its outcome, every copy waiting (`wait`)
 * wakes at once and reads it: over payments recorded here, the outcome's move itself wakes them (`moved`); over D1,
 * the owner tells the object (`finished`) after its D1 move.
 * Waiting stores nothing: the object holds who waits in memory, and one writer per payment means no copy polls
 * D1. A copy whose owner never tells (an evicted isolate) waits until its bound, then reads D1 all the same.
 * The same object can record the payment itself (`PaymentObject`, src/core/ledger/payment-object.ts): the ledger's
 * moves over objects (src/core/ledger/recorded.ts) store its records here and send them to D1 from its alarm, and
 * the alarm sweeps a payment left PENDING with the Cron sweep's own decision (./sweep.ts `sweptOutcome`): an x402
 * payment whose answer is kept and whose request died is settled while its authorization is valid, `SWEEP_MIN_AGE_MS`
 * after its answer was kept; every other one is read from the chain past its expiry.
 */
export class PaymentCoordinator extends PaymentObject {
  private finishedAt: number | undefined;
  private readonly waiting = new Set<() => void>();

  protected override readonly keptAnswerSweepMs = SWEEP_MIN_AGE_MS;

  protected override chainOutcome(transaction: NewTransaction, pending: PendingPayment, left: LeftByRequest) {
    return sweptOutcome(this.env, { transaction, pending, ...left }, new Date());
  }

  /** `true` once the owner finished (at once if it already has), `false` after `ms` without that. */
  wait(ms: number): Promise<boolean> {
    if (this.finishedAt !== undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.waiting.delete(wake);
          resolve(false);
        },
        Math.max(0, ms),
      );
      this.waiting.add(wake);
    });
  }

  /** A move recorded the request's outcome here: the copies waiting read it now, with no call of its own. */
  protected override moved(): void {
    this.finished();
  }

  /** The owner recorded the payment's outcome: every copy waiting reads it now. */
  finished(): void {
    this.finishedAt = Date.now();
    for (const wake of [...this.waiting]) wake();
  }
}

const coordinatorOf = (env: Env, transactionId: string) => env.PAYMENT_COORDINATOR.getByName(transactionId);

/** Waits, at most `ms`, for the owner of a payment to record its outcome. `false` when the bound passed first. */
export async function waitForOwner(env: Env, transactionId: string, ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  try {
    return await coordinatorOf(env, transactionId).wait(ms);
  } catch {
    return false; // the object could not be reached: the copy reads D1 as it would after its bound
  }
}

/** The owner has recorded its payment's outcome: wakes the copies waiting (after the answer, under `waitUntil`). */
export function ownerFinished(env: Env, defer: (work: Promise<unknown>) => void, transactionId: string): void {
  const told = (async () => coordinatorOf(env, transactionId).finished())();
  defer(told.catch(() => {})); // unreachable: the copies read D1 after their bound
}
