// Setup file: after every test file, scan every response and console line the file produced for a registered
// secret (see canaries.ts) and fail the file if one appears. A leak is reported by its label, never its value.
//
// Console output is captured twice over, so that a test silencing the console does not hide a leak:
// - a plain wrapper around console.log/info/warn/error/debug (not a `vi.spyOn`: `vi.restoreAllMocks()` in a test
//   file would remove a spy, but restores a spied method to this wrapper);
// - the recorded calls of any spy a test put on those methods (`captureConsole` replaces the implementation, so
//   the wrapper is not reached), read after every test, before the next
//   `beforeEach` can restore and clear them. `vi.spyOn` is wrapped to collect those spies.
import { afterAll, afterEach, beforeAll, expect, type MockInstance, vi } from "vitest";
import { canaries, describeLeaks, harvestStoredSecrets, markFileStart } from "./canaries.ts";

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;
type Level = (typeof LEVELS)[number];

const format = (args: unknown[]) =>
  args
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

interface ConsoleTap {
  sink: ((level: Level, args: unknown[]) => void) | null;
}
const TAP = Symbol.for("paywall-tests.canary-scan.console");
const holder = globalThis as unknown as Record<symbol, ConsoleTap | undefined>;

// Installed once per isolate; each test file points the sink at its own collector.
if (!holder[TAP]) {
  const tap: ConsoleTap = { sink: null };
  holder[TAP] = tap;
  for (const level of LEVELS) {
    const original = console[level] as (...args: unknown[]) => void;
    console[level] = function canaryTap(this: unknown, ...args: unknown[]) {
      try {
        tap.sink?.(level, args);
      } catch {
        // never let the scan break logging
      }
      return original.apply(this ?? console, args);
    } as Console[Level];
  }
}
(holder[TAP] as ConsoleTap).sink = (level, args) => canaries.observe("console", `console.${level}`, format(args));

/**
 * Every spy a test puts on a console method. In this pool a spied console method is not reachable as
 * `console.log` afterwards (the property reads as a bound function, `vi.isMockFunction` says false), so the
 * spies are collected where they are made.
 */
const consoleSpies: MockInstance[] = [];
const SPY_HOOK = Symbol.for("paywall-tests.canary-scan.spyOn");
const hooks = globalThis as unknown as Record<symbol, { onSpy: ((spy: MockInstance) => void) | null } | undefined>;
const hooked = vi as unknown as Record<symbol, boolean> & { spyOn: (...args: unknown[]) => unknown };
if (!hooks[SPY_HOOK]) hooks[SPY_HOOK] = { onSpy: null };
const spyHook = hooks[SPY_HOOK] as { onSpy: ((spy: MockInstance) => void) | null };
spyHook.onSpy = (spy) => consoleSpies.push(spy);
if (!hooked[SPY_HOOK]) {
  hooked[SPY_HOOK] = true;
  const spyOn = vi.spyOn.bind(vi) as (...args: unknown[]) => unknown;
  hooked.spyOn = (...args: unknown[]) => {
    const spy = spyOn(...args);
    if (args[0] === console) spyHook.onSpy?.(spy as MockInstance);
    return spy;
  };
}

/** The argument lists already read (a spy's `mock.calls` may be cleared between tests, so no index is kept). */
const readCalls = new WeakSet<object>();

function harvestConsoleSpies(): void {
  const spies = new Set<MockInstance>(consoleSpies);
  for (const level of LEVELS) if (vi.isMockFunction(console[level])) spies.add(console[level] as unknown as MockInstance);
  for (const spy of spies) {
    for (const args of (spy.mock?.calls ?? []) as unknown[][]) {
      if (readCalls.has(args)) continue;
      readCalls.add(args);
      canaries.observe("console", "console (spied)", format(args));
    }
  }
}

let observedAtLastHarvest = 0;

beforeAll(async () => {
  await markFileStart();
  observedAtLastHarvest = canaries.observationCount();
});

afterEach(async () => {
  harvestConsoleSpies();
  await canaries.flush();
  // Ciphertexts and key hashes of rows a later test may delete: read D1 after every test that called the app.
  if (canaries.observationCount() !== observedAtLastHarvest) {
    await harvestStoredSecrets();
    observedAtLastHarvest = canaries.observationCount();
  }
});

afterAll(async () => {
  harvestConsoleSpies();
  await canaries.flush();
  await harvestStoredSecrets();
  const leaks = canaries.findLeaks();
  canaries.resetObservations();
  if (leaks.length > 0) {
    const file = expect.getState().testPath ?? "(unknown test file)";
    throw new Error(describeLeaks(file, leaks));
  }
});
