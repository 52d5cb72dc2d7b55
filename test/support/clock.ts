// A clock the test moves by hand. The Worker, its Durable Objects and the tests share one isolate, so a faked `Date`
// is the time the app reads too (key expiry, rate-limit windows, `updatedAt`). Only `Date` is faked: timers and
// I/O run as usual. The setup file (setup.ts) puts the real clock back after every test.
import { vi } from "vitest";

export interface TestClock {
  /** The clock's time, in milliseconds since the epoch. */
  now(): number;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

/** Freezes `Date` at `start` (default: the real time now) until the test moves it. */
export function useTestClock(start: number = Date.now()): TestClock {
  vi.useFakeTimers({ toFake: ["Date"], now: start });
  return {
    now: () => Date.now(),
    advance: (ms) => vi.setSystemTime(Date.now() + ms),
  };
}
