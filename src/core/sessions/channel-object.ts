import { DurableObject } from "cloudflare:workers";
import type { x402ResourceServer } from "@x402/core/server";
import type { Channel } from "@x402/evm/batch-settlement/server";
import type { Hex } from "viem";
import type { PaymentRecord } from "../../db/ledger.ts";
import { getConfig } from "../config.ts";
import { type RecordsMessage, storeRecord } from "../ledger/payment-object.ts";
import { type ChannelChange, type ChannelUpdated, indexOfChannel } from "./channel-storage.ts";
import type { ChannelMeta, ForwardResult, Served, ServeRequest, ServeStore } from "./serve.ts";
import type { SettledChannel } from "./settlement.ts";

/** Records of a channel go to the payment-records queue at most this often (the object's alarm). */
const RECORDS_FLUSH_MS = 1_000;
/** Records sent but not reported landed are sent again after this long. */
const RECORDS_RESEND_MS = 30_000;
/** Records sent in one queue message. */
const RECORDS_PER_MESSAGE = 50;

/** A record kept until the queue's consumer reports it landed, and when it was last sent (0: never). */
interface Unsent {
  record: string;
  sentAt: number;
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
 * list a settlement run walks, written only when a channel is created or deleted, never per call.
 */
export class ChannelObject extends DurableObject<Env> {
  /** The update running now, or the last one: the next one starts after it. */
  private turn: Promise<unknown> = Promise.resolve();
  /** The scheme's resource server of a channel object, built by its first paid call. */
  private server: Promise<x402ResourceServer> | undefined;

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
        this.ctx.storage.kv.put("closed", current);
        this.ctx.storage.kv.delete("record");
        await this.closed(this.ctx.id.name ?? "");
        return { status: "deleted", value: null };
      }
      this.ctx.storage.kv.put("record", change.value);
      return { status: "updated", value: change.value };
    });
    this.turn = run.catch(() => {});
    return run;
  }

  /**
   * One paid call of a session (./serve.ts), within the object's turn: calls on one channel run one at a time, in
   * arrival order, whichever isolate received them. `forward` is the gateway's: it calls the upstream and answers
   * with its status. The call's records are kept here and sent by the alarm, never on the request path.
   */
  serve(req: ServeRequest, forward: () => Promise<ForwardResult>): Promise<Served> {
    const run = this.turn.then(async (): Promise<Served> => {
      const key = getConfig(this.env).sessionAuthorizerKey;
      if (!key) return { kind: "refused", reason: "Sessions are not offered here" };
      const { resourceServer, serveCall } = await import("./serve.ts");
      const store = this.serveStore(req.name);
      if (!this.server) {
        this.server = resourceServer(store, req, key as Hex);
        this.server.catch(() => {
          this.server = undefined;
        });
      }
      return serveCall(store, await this.server, req, forward);
    });
    this.turn = run.catch(() => {});
    return run;
  }

  /** The channel's meta (who sells through it), the scheme's record and the records not landed yet, as JSON text. */
  state(): { meta: string | null; record: string | null; unsent: { seq: number; record: string; sent: boolean }[] } {
    const meta = this.ctx.storage.kv.get("meta");
    return {
      meta: meta === undefined ? null : JSON.stringify(meta),
      record: this.read(),
      unsent: this.unsent().map(([seq, u]) => ({ seq, record: u.record, sent: u.sentAt > 0 })),
    };
  }

  private serveStore(name: string): ServeStore {
    const index = () => this.env.CHANNELS.getByName(indexOfChannel(name));
    return {
      kv: this.ctx.storage.kv,
      onCreate: (id) => index().track(id),
      onDelete: async (id) => {
        await this.closed(name);
        await index().untrack(id);
      },
      keep: (records) => this.keep(name, records),
    };
  }

  /** Adds records to the outbox; the alarm sends them within `RECORDS_FLUSH_MS`. */
  private keep(name: string, records: PaymentRecord[]): void {
    const kv = this.ctx.storage.kv;
    kv.put("name", name);
    let next = kv.get<number>("next") ?? 1;
    for (const record of records) kv.put(`unsent:${next++}`, { record: storeRecord(record), sentAt: 0 } satisfies Unsent);
    kv.put("next", next);
    this.ctx.waitUntil(this.armAlarm(Date.now() + RECORDS_FLUSH_MS));
  }

  private async armAlarm(at: number): Promise<void> {
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
  }

  private unsent(): [number, Unsent][] {
    return Array.from(this.ctx.storage.kv.list<Unsent>({ prefix: "unsent:" }), ([key, value]) => [Number(key.slice(7)), value]);
  }

  /** The alarm: a channel object's outbox flushed to the payment-records queue. */
  override async alarm(): Promise<void> {
    const name = this.ctx.id.name ?? this.ctx.storage.kv.get<string>("name") ?? "";
    if (name.startsWith("index:")) {
      const { settlementAlarm } = await import("./settlement.ts");
      await settlementAlarm(this.env, this.ctx.storage, name);
    } else if (name.startsWith("channel:")) await this.flushRecords(name);
  }

  /**
   * Sends the records not sent yet (or sent `RECORDS_RESEND_MS` ago and not reported landed) as one message; they stay
   * until the consumer reports them landed (`recordsLanded`). A failed send is tried again by the next alarm.
   */
  private async flushRecords(name: string): Promise<void> {
    const now = Date.now();
    const due = this.unsent()
      .filter(([, u]) => u.sentAt === 0 || u.sentAt + RECORDS_RESEND_MS <= now)
      .slice(0, RECORDS_PER_MESSAGE);
    if (due.length > 0) {
      try {
        const channelId = name.slice(name.lastIndexOf(":") + 1);
        const message = {
          transactionId: channelId,
          seqs: due.map(([seq]) => seq),
          records: due.map(([, u]) => u.record),
          channel: name,
        };
        await this.env.PAYMENT_RECORDS_QUEUE.send(message satisfies RecordsMessage);
        for (const [seq, u] of due)
          if (this.ctx.storage.kv.get(`unsent:${seq}`)) this.ctx.storage.kv.put(`unsent:${seq}`, { ...u, sentAt: now });
      } catch {
        // Sent again by the next alarm.
      }
    }
    const left = this.unsent();
    if (left.length === 0) return;
    const soonest = Math.min(...left.map(([, u]) => (u.sentAt === 0 ? now + RECORDS_FLUSH_MS : u.sentAt + RECORDS_RESEND_MS)));
    await this.ctx.storage.setAlarm(Math.max(soonest, now + RECORDS_FLUSH_MS));
  }

  /** Of an index object: lists a channel of its scope, and arms the scope's settlement runs (./settlement.ts). */
  async track(id: string): Promise<void> {
    this.ctx.storage.kv.put(`id:${id}`, 1);
    await this.armSettlement();
  }

  untrack(id: string): void {
    this.ctx.storage.kv.delete(`id:${id}`);
  }

  /**
   * Of an index object: a channel of its scope closed (refunded) owing a settlement. Its charges, claimed on chain by
   * the refund, are settled to the wallet and recorded by the next run (`closed:<id>`, until that run told its object).
   */
  async owes(id: string): Promise<void> {
    this.ctx.storage.kv.put(`closed:${id}`, 1);
    this.ctx.storage.kv.put("unsettled", 1);
    await this.armSettlement();
  }

  private async armSettlement(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.now() + getConfig(this.env).sessions.settleIntervalSeconds * 1000);
    }
  }

  tracked(): string[] {
    return Array.from(this.ctx.storage.kv.list({ prefix: "id:" }), ([key]) => key.slice(3));
  }

  /**
   * Of a channel's object whose record was just deleted (a refund): its row becomes CLOSED, with what it was charged.
   * The record as it was stays under `closed`, for the settlement of what the refund claimed.
   */
  private async closed(name: string): Promise<void> {
    const kv = this.ctx.storage.kv;
    const meta = kv.get<ChannelMeta>("meta");
    const last = kv.get<string>("closed");
    if (!meta || !last) return;
    const { channelRow } = await import("./serve.ts");
    const moves = (kv.get<number>("moves") ?? 0) + 1;
    kv.put("moves", moves);
    const channel = JSON.parse(last) as Channel;
    const row = channelRow(kv, meta, channel, moves, new Date());
    this.keep(name, [{ kind: "channel", row: { ...row, claimed: channel.chargedCumulativeAmount, status: "CLOSED" } }]);
    if (BigInt(channel.chargedCumulativeAmount) > BigInt(kv.get<string>("settled") ?? "0")) {
      await this.env.CHANNELS.getByName(indexOfChannel(name)).owes(channel.channelId.toLowerCase());
    }
  }

  /**
   * Of a channel's object: a settlement run (./settlement.ts) settled it up to `settlement.claimed`. Its records go to
   * the outbox, once per settlement (the same settlement told again records nothing): `false` when nothing was new.
   */
  async settled(settlement: SettledChannel): Promise<boolean> {
    const name = this.ctx.id.name ?? this.ctx.storage.kv.get<string>("name") ?? "";
    const { settlementRecords } = await import("./settlement.ts");
    const records = await settlementRecords(this.ctx.storage, settlement);
    if (records) this.keep(name, records);
    return records !== null;
  }

  /**
   * The payment-records consumer's report: the records numbered `seqs` (kept under `unsent:<seq>` until now) are in
   * D1. Records not reported are sent again.
   */
  recordsLanded(seqs: number[]): void {
    for (const seq of seqs) this.ctx.storage.kv.delete(`unsent:${seq}`);
  }
}
