// The ledger's moves over payments recorded in their Durable Objects (src/core/ledger/payment-object.ts) rather than
// in D1: the same names and arguments as src/core/ledger/ledger.ts but the first (the objects' namespace instead of
// `db`), the same rows, the same move table guarding every move, and no D1 statement on the caller's path: D1 gets
// the records from the object's alarm, as its read model (docs/gateway.md, "Payments recorded in their objects").
import type { Outcome, PaymentRef, PaymentStart } from "./ledger.ts";
import { completeRows, failRows, startRows } from "./ledger.ts";
import type { MoveRecord, PaymentObject } from "./payment-object.ts";

/** Where payments are recorded: the per-payment objects (the Worker's `PAYMENT_COORDINATOR` binding). */
export interface PaymentObjects {
  PAYMENT_COORDINATOR: DurableObjectNamespace<PaymentObject>;
}

const objectOf = (env: PaymentObjects, transactionId: string) => env.PAYMENT_COORDINATOR.getByName(transactionId);
const move = (env: PaymentObjects, transactionId: string, name: Parameters<PaymentObject["move"]>[0], r: MoveRecord) =>
  objectOf(env, transactionId).move(name, r);

/** `start`: PENDING with its REQUEST event. `false` when the payment was already recorded. */
export function startPayment(env: PaymentObjects, p: PaymentStart): Promise<boolean> {
  const [transaction, event] = startRows(p);
  return move(env, p.transactionId, "start", { transaction, events: [event] });
}

/** `complete`: COMPLETED with the transfer's hash and its SUCCESS event. `false` if it was not PENDING. */
export function completePayment(env: PaymentObjects, p: PaymentRef, txHash: string, o: Outcome): Promise<boolean> {
  const [change, event] = completeRows(p, txHash, o);
  return move(env, p.transactionId, "complete", { transaction: change, events: [event] });
}

/** `fail`: FAILED with the reason and its ERROR event. `false` if it was not PENDING. */
export function failPayment(env: PaymentObjects, p: PaymentRef, reason: string, o: Outcome): Promise<boolean> {
  const [change, event] = failRows(p, reason, o);
  return move(env, p.transactionId, "fail", { transaction: change, events: [event] });
}

/** `leaveUnknown`: still PENDING, the settlement's hash kept when known. `false` if it was not PENDING. */
export function leavePaymentUnknown(env: PaymentObjects, p: PaymentRef, txHash: string | undefined): Promise<boolean> {
  return move(env, p.transactionId, "leaveUnknown", { transaction: txHash === undefined ? {} : { txHash }, events: [] });
}

/** Where a recorded payment stands, from its object (never D1), or `undefined` if never recorded. */
export async function paymentStatus(env: PaymentObjects, transactionId: string) {
  const row = await objectOf(env, transactionId).transaction();
  return row ? { status: row.status, txHash: row.txHash ?? null } : undefined;
}
