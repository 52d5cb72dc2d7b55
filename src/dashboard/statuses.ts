/**
 * The dashboard's one reading of payment statuses: the event each status is recorded as, taken from the ledger's move
 * table (`PAYMENT_MOVES`), never restated. A payment started (PENDING) is a REQUEST, COMPLETED a SUCCESS, FAILED an
 * ERROR, whatever the table says tomorrow.
 */
import { PAYMENT_MOVES } from "../core/ledger/ledger.ts";
import { type EventType, TRANSACTION_STATUSES, type TransactionStatus } from "../db/schema.ts";

/** The event type of the move that brings a payment to `status` and records an event. */
function eventRecordedAt(status: TransactionStatus): EventType {
  const move = Object.values(PAYMENT_MOVES).find((m) => m.to === status && m.event !== null);
  if (!move?.event) throw new Error(`No move of the ledger records an event for ${status}`);
  return move.event;
}

/** Each payment status with the event its move records: the events list follows the status filter through it. */
export const EVENT_OF_STATUS = Object.fromEntries(TRANSACTION_STATUSES.map((s) => [s, eventRecordedAt(s)])) as Record<
  TransactionStatus,
  EventType
>;
