import { DurableObject } from "cloudflare:workers";
import { appendOutcome, type CallOutcome } from "../../lib/facilitator-health.ts";

/**
 * Facilitators' health, shared by every isolate (docs/gateway.md, "Facilitators"): one object per mode (`testnet`,
 * `mainnet`) keeps the newest outcomes of each facilitator's verify and settle calls, in memory and in its storage.
 *
 * The payment path never waits for it: each isolate ranks facilitators from a note of its own, refreshed from the
 * object in the background at most every `NOTE_MAX_AGE_MS`, and its own calls' outcomes go into that note at once
 * and to the object under `waitUntil`, those of each `REPORT_BATCH_MS` in one `report`.
 */
export class FacilitatorHealthObject extends DurableObject {
  private recent: Map<string, CallOutcome[]> | undefined;

  private async load(): Promise<Map<string, CallOutcome[]>> {
    if (!this.recent) {
      const stored = await this.ctx.storage.get<Record<string, CallOutcome[]>>("recent");
      this.recent ??= new Map(Object.entries(stored ?? {}));
    }
    return this.recent;
  }

  async report(outcomes: CallOutcome[]): Promise<void> {
    const recent = await this.load();
    for (const o of outcomes) recent.set(o.url, appendOutcome(recent.get(o.url) ?? [], o));
    await this.ctx.storage.put("recent", Object.fromEntries(recent));
  }

  /** Each facilitator's recent outcomes (only the `urls` asked for: a facilitator no longer configured is left out). */
  async outcomes(urls: string[]): Promise<Record<string, CallOutcome[]>> {
    const recent = await this.load();
    return Object.fromEntries(urls.map((url) => [url, recent.get(url) ?? []]));
  }
}
