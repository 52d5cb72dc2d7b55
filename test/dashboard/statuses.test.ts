import { describe, expect, it } from "vitest";
import { PAYMENT_MOVES } from "../../src/core/ledger/ledger.ts";
import { EVENT_OF_STATUS } from "../../src/dashboard/statuses.ts";
import { TRANSACTION_STATUSES } from "../../src/db/schema.ts";

describe("the dashboard's payment statuses", () => {
  it("reads each status as the event its ledger move records", () => {
    expect(EVENT_OF_STATUS).toEqual({ PENDING: "REQUEST", COMPLETED: "SUCCESS", FAILED: "ERROR" });
  });

  it("names a status for every move that records an event, and only those", () => {
    for (const status of TRANSACTION_STATUSES) {
      const recording = Object.values(PAYMENT_MOVES).filter((m) => m.to === status && m.event !== null);
      expect(recording.map((m) => m.event)).toEqual([EVENT_OF_STATUS[status]]);
    }
  });
});
