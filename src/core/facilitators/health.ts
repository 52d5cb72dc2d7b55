import type { Mode } from "../../db/schema.ts";
import {
  appendOutcome,
  type CallOutcome,
  displayUrl,
  type FacilitatorHealth,
  rank,
  summarize,
} from "../../lib/facilitator-health.ts";
import { getConfig } from "../config.ts";

// The object itself is in ./health-object.ts (it needs the Workers runtime; this module is read by Node scripts too).

/** How old an isolate's note may get before it is refreshed from the shared object (in the background). */
export const NOTE_MAX_AGE_MS = 5_000;

interface Note {
  recent: Map<string, CallOutcome[]>;
  readAt: number;
  refreshing?: Promise<void>;
}

/** Per isolate and mode: outcomes are per facilitator URL, so a note serves whatever list the vars name. */
const notes = new Map<Mode, Note>();

const objectOf = (env: Env, mode: Mode) => env.FACILITATOR_HEALTH.get(env.FACILITATOR_HEALTH.idFromName(mode));

function noteOf(mode: Mode): Note {
  let note = notes.get(mode);
  if (!note) {
    note = { recent: new Map(), readAt: 0 };
    notes.set(mode, note);
  }
  return note;
}

interface Waiter {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * The mode's facilitators in the order to ask them, from this isolate's note. A note older than `NOTE_MAX_AGE_MS` is
 * refreshed under `waitUntil`: this call never waits for the shared object.
 */
export function rankedFacilitators(env: Env, ctx: Waiter, mode: Mode): string[] {
  const urls = getConfig(env).facilitatorUrls[mode];
  if (urls.length < 2) return urls;
  const note = noteOf(mode);
  if (!note.refreshing && Date.now() - note.readAt > NOTE_MAX_AGE_MS) {
    note.refreshing = Promise.resolve()
      .then(() => objectOf(env, mode).outcomes(urls))
      .then((shared) => {
        for (const [url, outcomes] of Object.entries(shared)) {
          // The shared outcomes and this isolate's own (some may not have reached the object yet).
          let merged = outcomes;
          for (const o of note.recent.get(url) ?? []) {
            if (!merged.some((m) => m.at === o.at && m.ms === o.ms)) merged = appendOutcome(merged, o);
          }
          note.recent.set(url, merged);
        }
        note.readAt = Date.now();
      })
      .catch(() => {
        note.readAt = Date.now(); // not asked again before the next interval
      })
      .finally(() => {
        note.refreshing = undefined;
      });
    ctx.waitUntil(note.refreshing);
  }
  return rank(urls, healthOf(urls, note.recent));
}

/** How long an isolate gathers its calls' outcomes before it sends them to the shared object, in one call. */
export const REPORT_BATCH_MS = 500;
/** A send still scheduled after this long was lost with its request (an isolate's end): the next outcome schedules anew. */
const REPORT_LOST_MS = 30_000;

/**
 * Per isolate and mode: the outcomes not yet sent (each facilitator's newest `HEALTH_WINDOW`, all the object would
 * keep of them), and when their send was scheduled.
 */
interface Outbox {
  recent: Map<string, CallOutcome[]>;
  scheduledAt?: number;
}

const outboxes = new Map<Mode, Outbox>();

/**
 * One call's outcome: into this isolate's note now, to the shared object under `waitUntil` within `REPORT_BATCH_MS`,
 * with the other outcomes of that interval in one call (its failure ignored). The first outcome of an interval
 * schedules the send; it takes whatever the interval gathered, so each outcome is sent once.
 */
export function reportOutcome(env: Env, ctx: Waiter, mode: Mode, outcome: CallOutcome): void {
  const note = noteOf(mode);
  note.recent.set(outcome.url, appendOutcome(note.recent.get(outcome.url) ?? [], outcome));
  let box = outboxes.get(mode);
  if (!box) {
    box = { recent: new Map() };
    outboxes.set(mode, box);
  }
  box.recent.set(outcome.url, appendOutcome(box.recent.get(outcome.url) ?? [], outcome));
  const now = Date.now();
  if (box.scheduledAt !== undefined && now - box.scheduledAt < REPORT_LOST_MS) return;
  box.scheduledAt = now;
  const sending = box;
  // Never in the way of a payment: a binding or object that fails loses these outcomes, nothing more.
  ctx.waitUntil(
    scheduler
      .wait(REPORT_BATCH_MS)
      .then(() => {
        const outcomes = [...sending.recent.values()].flat();
        sending.recent.clear();
        sending.scheduledAt = undefined;
        return outcomes.length > 0 ? objectOf(env, mode).report(outcomes) : undefined;
      })
      .catch(() => {}),
  );
}

const healthOf = (urls: string[], recent: Map<string, CallOutcome[]>) =>
  new Map(urls.map((url) => [url, summarize(url, recent.get(url) ?? [])]));

/**
 * Every configured facilitator's health per mode, read from the shared objects (for operators: /v1/health), shown by
 * `displayUrl`. A mode whose object does not answer shows its facilitators `unknown`.
 */
export async function facilitatorHealth(env: Env): Promise<(FacilitatorHealth & { mode: Mode })[]> {
  const config = getConfig(env);
  const modes: Mode[] = ["testnet", "mainnet"];
  const read = await Promise.all(
    modes.map(async (mode) => {
      const urls = config.facilitatorUrls[mode];
      const shared = await Promise.resolve()
        .then(() => objectOf(env, mode).outcomes(urls))
        .catch(() => ({}) as Record<string, CallOutcome[]>);
      return urls.map((url) => ({ mode, ...summarize(url, shared[url] ?? []), url: displayUrl(url) }));
    }),
  );
  return read.flat();
}
