// The one console capture, for every test inside workerd. The setup file (setup.ts) installs it: console.log, info,
// warn, error and debug print nothing and record each line instead, the app's lines (the access log, error logs) and
// the tests' own alike. A test reads them with `consoleOutput()`; the canary scan (canary-scan.ts) is handed every
// line as it is written, so silencing never hides a leak. `printToRunner` is the one way to show a line in the test
// run's output (a suite's summary).
//
// The Worker, its Durable Objects and the tests share one isolate, and test files share isolates (`isolate: false`),
// so the capture is installed once per isolate and its record restarts with each test file.
import { vi } from "vitest";

export const LEVELS = ["log", "info", "warn", "error", "debug"] as const;
export type Level = (typeof LEVELS)[number];

interface Line {
  level: Level;
  text: string;
}

interface Capture {
  /** The current test file's lines, in order. */
  lines: Line[];
  /** Handed every line (the canary scan). */
  sink: ((line: Line) => void) | null;
  /** The console's own `log`, for `printToRunner`. */
  print: (...args: unknown[]) => void;
}

export interface ConsoleOutput {
  /** Every line written since `consoleOutput()` was called, in order. */
  readonly lines: string[];
  /** The lines written with `console[level]` since then. */
  at(level: Level): string[];
  /** The lines that parse as JSON objects (the access log writes one per request). */
  entries(): Record<string, unknown>[];
}

/** One console call as one line of text: strings as they are, errors with their stack and cause, values as JSON. */
export function formatConsoleArgs(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error)
        return `${a.message}\n${a.stack ?? ""}${a.cause === undefined ? "" : `\ncause: ${String(a.cause)}`}`;
      try {
        return JSON.stringify(a) ?? String(a);
      } catch {
        return String(a);
      }
    })
    .join(" ");
}

const KEY = Symbol.for("paywall-tests.console-capture");
const holder = globalThis as unknown as Record<symbol, Capture | undefined>;

/** The capture of this isolate, installed at the first use: console.log … debug then record instead of printing. */
function capture(): Capture {
  const installed = holder[KEY];
  if (installed) return installed;
  const c: Capture = { lines: [], sink: null, print: console.log.bind(console) };
  for (const level of LEVELS) {
    console[level] = (...args: unknown[]) => {
      const line = { level, text: formatConsoleArgs(args) };
      c.lines.push(line);
      c.sink?.(line);
    };
  }
  holder[KEY] = c;
  return c;
}

/**
 * Installs the capture in this isolate (at its first call) and starts a fresh record for the test file. A spy on a
 * console method would take lines before the capture (and the canary scan) sees them: `vi.spyOn(console, …)` throws.
 */
export function installConsoleCapture(): void {
  capture().lines = [];
  const spyable = vi as unknown as { spyOn: (...args: unknown[]) => unknown; [KEY]?: true };
  if (spyable[KEY]) return;
  const spyOn = vi.spyOn.bind(vi) as (...args: unknown[]) => unknown;
  spyable.spyOn = (...args: unknown[]) => {
    if (args[0] === console)
      throw new Error("Console output is already captured: read it with consoleOutput() (test/support/console.ts)");
    return spyOn(...args);
  };
  spyable[KEY] = true;
}

/** Hands every console line, as it is written, to `sink` (the canary scan; one sink per isolate, the current file's). */
export function onConsoleLine(sink: (level: Level, text: string) => void): void {
  capture().sink = (line) => sink(line.level, line.text);
}

/** The console output from this call on (call it at the start of a test, or in `beforeEach`, for the whole test's). */
export function consoleOutput(): ConsoleOutput {
  const record = capture().lines;
  const start = record.length;
  const since = () => record.slice(start);
  return {
    get lines() {
      return since().map((l) => l.text);
    },
    at: (level) => since().flatMap((l) => (l.level === level ? [l.text] : [])),
    entries: () =>
      since().flatMap(({ text }) => {
        try {
          const parsed = JSON.parse(text);
          return parsed && typeof parsed === "object" ? [parsed as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
  };
}

/** Shows a line in the test run's output (a suite's summary); the canary scan reads it too. */
export function printToRunner(text: string): void {
  const c = capture();
  c.sink?.({ level: "log", text });
  c.print(text);
}
