// The one console capture: silences console output and records it, so a test can assert on the app's log lines.
// The canary scan (canary-scan.ts) reads these lines too, so silencing never hides a leak.
import { vi } from "vitest";

export interface CapturedConsole {
  /** Every line written with console.log / error / warn / info / debug since the capture began, in order. */
  lines: string[];
  /** The lines that parse as JSON objects (the access log writes one per request). */
  entries(): Record<string, unknown>[];
}

const format = (args: unknown[]) =>
  args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error) return `${a.message} ${a.stack ?? ""}`;
      try {
        return JSON.stringify(a);
      } catch {
        return String(a);
      }
    })
    .join(" ");

/** Captures (and silences) console output until `vi.restoreAllMocks()`. */
export function captureConsole(): CapturedConsole {
  const lines: string[] = [];
  const record = (...args: unknown[]) => {
    lines.push(format(args));
  };
  for (const level of ["log", "error", "warn", "info", "debug"] as const) vi.spyOn(console, level).mockImplementation(record);
  return {
    lines,
    entries: () =>
      lines.flatMap((line) => {
        try {
          const parsed = JSON.parse(line);
          return parsed && typeof parsed === "object" ? [parsed as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
  };
}
