import { DurableObject } from "cloudflare:workers";
import type { RecordsMessage } from "../ledger/payment-object.ts";
import { armSettlement, keepSettlementRecords, type SettledChannel, settlementAlarm } from "./settlement.ts";

/** What an update decided, given the record it was shown: keep it, or replace it (null: delete it). */
export type ChannelChange = { kind: "unchanged" } | { kind: "write"; value: string | null };

export interface ChannelUpdated {
  status: "updated" | "unchanged" | "deleted";
  /** The record after the update, as JSON text; null when there is none. */
  value: string | null;
}

/**
 * One object per payment channel (named by channel-storage.ts), holding the channel's record as JSON text in its
 * SQLite storage (an evicted object keeps it).
 *
 * `update(decide)` is the conditional update a session's channel state needs across every isolate of the Worker: the
 * object shows `decide` (a function of the caller, called back over RPC) the current record and stores what it
 * answers, and runs one update at a time, in arrival order, so no update can read a record another one is about to
 * replace. If the caller goes away or `decide` throws, nothing is stored and the next update runs.
 *
 * Objects named `index:…` keep the ids of a scope's channels instead (`track`, `untrack`, `tracked`): the channel
 * list a settlement run walks, written only when a channel is created or deleted, never per call. Their alarm is
 * that scope's settlement run (settlement.ts): set when the index first lists a channel, then every
 * SESSION_SETTLE_INTERVAL_SECONDS while it lists any.
 */
export class ChannelObject extends DurableObject<Env> {
  /** The update running now, or the last one: the next one starts after it. */
  private turn: Promise<unknown> = Promise.resolve();

  read(): string | null {
    return this.ctx.storage.kv.get<string>("record") ?? null;
  }

  update(decide: (current: string | null) => Promise<ChannelChange>): Promise<ChannelUpdated> {
    const run = this.turn.then(async (): Promise<ChannelUpdated> => {
      const current = this.read();
      const change = await decide(current);
      if (change.kind === "unchanged") return { status: "unchanged", value: current };
      if (change.value === null) {
        if (current === null) return { status: "unchanged", value: null };
        this.ctx.storage.kv.delete("record");
        return { status: "deleted", value: null };
      }
      this.ctx.storage.kv.put("record", change.value);
      return { status: "updated", value: change.value };
    });
    this.turn = run.catch(() => {});
    return run;
  }

  async track(id: string): Promise<void> {
    this.ctx.storage.kv.put(`id:${id}`, 1);
    await armSettlement(this.env, this.ctx.storage);
  }

  untrack(id: string): void {
    this.ctx.storage.kv.delete(`id:${id}`);
  }

  tracked(): string[] {
    return Array.from(this.ctx.storage.kv.list({ prefix: "id:" }), ([key]) => key.slice(3));
  }

  /** A settlement of this channel (settlement.ts): its records kept here and returned to be sent, once per settlement. */
  settled(settlement: SettledChannel): Promise<RecordsMessage | null> {
    return keepSettlementRecords(this.ctx.storage, this.ctx.id.name ?? "", settlement);
  }

  override async alarm(): Promise<void> {
    const name = this.ctx.id.name ?? "";
    if (name.startsWith("index:")) await settlementAlarm(this.env, this.ctx.storage, name);
  }

  /**
   * The payment-records consumer's report: the records numbered `seqs` (kept under `unsent:<seq>` until now) are in
   * D1. Records not reported are sent again.
   */
  recordsLanded(seqs: number[]): void {
    for (const seq of seqs) this.ctx.storage.kv.delete(`unsent:${seq}`);
  }
}
