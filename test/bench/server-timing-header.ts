import type { Account } from "../../src/lib/instrumentation.ts";

/** Parses the header written by `formatServerTiming` (the benchmark and its tests read it). */
export function parseServerTiming(header: string | null | undefined): (Account & { appMs: number }) | undefined {
  if (!header) return undefined;
  const num = (re: RegExp) => Number(re.exec(header)?.[1] ?? Number.NaN);
  const out = {
    statements: num(/d1;desc="statements=(\d+)"/),
    d1Ms: num(/d1;desc="[^"]*";dur=([\d.]+)/),
    doCalls: num(/do;desc="calls=(\d+)"/),
    doMs: num(/do;desc="[^"]*";dur=([\d.]+)/),
    appMs: num(/app;dur=([\d.]+)/),
  };
  return Object.values(out).some(Number.isNaN) ? undefined : out;
}
