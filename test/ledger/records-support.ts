// A payment's records as its object sends them to D1: its start (the PENDING transaction, its REQUEST event) and its
// completion (the COMPLETED transaction with its webhook delivery, its SUCCESS event), from the ledger's own rows.
import { completeRows, type PaymentRef, type PaymentStart, startRows } from "../../src/core/ledger/ledger.ts";
import { transactionDeliveryIdPrefix } from "../../src/core/webhooks/events.ts";
import type { PaymentRecord } from "../../src/db/ledger.ts";

export function startedAndCompleted(ref: PaymentRef, start: PaymentStart, txHash: string, responseTime: number) {
  const [transaction, request] = startRows(start);
  const [change, success] = completeRows(ref, txHash, { statusCode: 200, responseTime });
  const started: PaymentRecord[] = [
    { kind: "transaction", row: transaction },
    { kind: "event", row: request },
  ];
  const completed: PaymentRecord[] = [
    {
      kind: "transaction",
      row: { ...transaction, ...change },
      webhook: {
        type: "transaction.completed",
        idPrefix: transactionDeliveryIdPrefix(ref.transactionId, "transaction.completed"),
        at: new Date(),
      },
    },
    { kind: "event", row: success },
  ];
  return { started, completed };
}
