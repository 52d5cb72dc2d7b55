/**
 * wrangler.toml's Cron Triggers under `npm run dev`: local dev never runs them by itself, so the dev runner does, on
 * their deployed schedule (UTC, checked at each minute's start): the payment sweep every five minutes, the hourly
 * cleanup. Quiet: nothing is printed unless a run fails (one line on stderr).
 */
import { cronMatches, parseCron } from "../lib/cron.ts";
import { WRANGLER_CONFIG } from "./platform.ts";

/** The `[triggers] crons` of wrangler.toml. */
export async function wranglerCrons(): Promise<string[]> {
  const { unstable_readConfig } = await import("wrangler");
  return unstable_readConfig({ config: WRANGLER_CONFIG }, { hideWarnings: true }).triggers.crons ?? [];
}

/**
 * Runs `run(cron, scheduledTime)` for each cron at each minute it fires (one run at a time per cron: a run still going
 * when its next minute comes skips that minute). Returns the function that stops it. Does not keep Node alive.
 */
export function runCronsOnSchedule(crons: string[], run: (cron: string, scheduledTime: number) => Promise<void>): () => void {
  const schedules = crons.map((cron) => ({ cron, schedule: parseCron(cron), running: false }));
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    for (const entry of schedules) {
      if (entry.running || !cronMatches(entry.schedule, new Date(minute))) continue;
      entry.running = true;
      run(entry.cron, minute)
        .catch((err: unknown) => {
          process.stderr.write(`npm run dev: the cron "${entry.cron}" failed: ${(err as Error).message}\n`);
        })
        .finally(() => {
          entry.running = false;
        });
    }
    schedule();
  };
  const schedule = () => {
    timer = setTimeout(tick, 60_000 - (Date.now() % 60_000));
    timer.unref();
  };
  schedule();
  return () => clearTimeout(timer);
}

/** Runs a cron through the local runtime's own route for it (Miniflare's `/cdn-cgi/local/scheduled`). */
export async function scheduledOverHttp(port: string, cron: string, scheduledTime: number): Promise<void> {
  const query = new URLSearchParams({ cron, time: String(scheduledTime) });
  const res = await fetch(`http://127.0.0.1:${port}/cdn-cgi/local/scheduled?${query}`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`the Worker answered ${res.status}`);
}
