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

/** One call's outcome: into this isolate's note now, to the shared object under `waitUntil` (its failure ignored). */
export function reportOutcome(env: Env, ctx: Waiter, mode: Mode, outcome: CallOutcome): void {
  const note = noteOf(mode);
  note.recent.set(outcome.url, appendOutcome(note.recent.get(outcome.url) ?? [], outcome));
  // Never in the way of a payment: a binding or object that fails loses one outcome, nothing more.
  ctx.waitUntil(
    Promise.resolve()
      .then(() => objectOf(env, mode).report([outcome]))
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
