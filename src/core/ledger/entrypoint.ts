import { WorkerEntrypoint } from "cloudflare:workers";
import type { Event, Transaction } from "../../api/routes/history-records.ts";
import { getDb } from "../../db/client.ts";
import { toApiError } from "../http/render.ts";
import { type IngestResult, type Recorded, recordEvents, recordTransactions, settleTransaction } from "./ingest.ts";
import type { EventInput, SettlementInput, TransactionInput } from "./schemas.ts";

/** A storage failure as a result, with the generic message of the HTTP API: D1 errors carry parameters. */
async function guarded<T>(work: () => Promise<IngestResult<T>>): Promise<IngestResult<T>> {
  try {
    return await work();
  } catch (err) {
    const apiError = toApiError(err);
    console.error(JSON.stringify({ entrypoint: "Ingest", error: apiError.code }));
    return { ok: false, code: apiError.code, error: apiError.message };
  }
}

const single = <T>(result: IngestResult<Recorded<T>[]>): IngestResult<Recorded<T>> =>
  result.ok ? { ok: true, data: result.data[0] as Recorded<T> } : result;

/**
 * The payment gateway's way to write history, over a service binding (`entrypoint = "Ingest"`).
 * Tenant and service are derived from the paywall; ids are the caller's, so retries are idempotent.
 */
export class Ingest extends WorkerEntrypoint<Env> {
  recordEvent(event: EventInput): Promise<IngestResult<Recorded<Event>>> {
    return guarded(async () => single(await recordEvents(getDb(this.env.DB), [event])));
  }

  recordEvents(events: EventInput[]): Promise<IngestResult<Recorded<Event>[]>> {
    return guarded(() => recordEvents(getDb(this.env.DB), Array.isArray(events) ? events : []));
  }

  recordTransaction(transaction: TransactionInput): Promise<IngestResult<Recorded<Transaction>>> {
    return guarded(async () => single(await recordTransactions(getDb(this.env.DB), [transaction])));
  }

  recordTransactions(list: TransactionInput[]): Promise<IngestResult<Recorded<Transaction>[]>> {
    return guarded(() => recordTransactions(getDb(this.env.DB), Array.isArray(list) ? list : []));
  }

  settleTransaction(id: string, settlement: SettlementInput): Promise<IngestResult<Transaction>> {
    return guarded(() => settleTransaction(getDb(this.env.DB), id, settlement));
  }
}
