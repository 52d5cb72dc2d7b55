// Calls the app with a modified environment (a failing or recording D1, a fake rate limiter, other limits),
// and captures the app's log lines. The Worker and the tests share one isolate, so console spies see the app's output.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { type MockInstance, vi } from "vitest";
import { createApp } from "../../src/app.ts";
import type { RateLimitDecision } from "../../src/rate-limit/durable-object.ts";
import { observeResponse } from "./canaries.ts";
import { buildRequest, type CallOptions } from "./factories.ts";

export { buildRequest };

const app = createApp();

/**
 * Calls a fresh `createApp()` with `overrides` on top of the test environment, and waits for its `waitUntil` work.
 * Config is parsed per env object, so each call sees its own `RATE_LIMIT_*` values.
 */
export async function callWithEnv(overrides: Partial<Record<keyof Env, unknown>>, path: string, options: CallOptions = {}) {
  return fetchWithEnv(overrides, buildRequest(path, options));
}

export async function fetchWithEnv(overrides: Partial<Record<keyof Env, unknown>>, request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(request, { ...env, ...overrides } as Env, ctx);
  await waitOnExecutionContext(ctx);
  observeResponse(res, `${request.method} ${new URL(request.url).pathname}`);
  return res;
}

/** A D1 binding that forwards to the real one and records every method called on it or on its statements. */
export function recordingDb(real: D1Database = env.DB): { db: D1Database; calls: string[] } {
  const calls: string[] = [];
  const wrap = <T extends object>(target: T, label: string): T =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push(`${label}.${String(prop)}`);
          const result = value.apply(t, args);
          return result && typeof result === "object" && !(result instanceof Promise) ? wrap(result, label) : result;
        };
      },
    });
  return { db: wrap(real, "DB"), calls };
}

/** A D1 binding whose every query fails with `message` (as D1 does when it is unreachable or overloaded). */
export function failingDb(message = "D1_ERROR: Network connection lost."): D1Database {
  const fail = () => Promise.reject(new Error(message));
  const statement = {
    bind: () => statement,
    all: fail,
    raw: fail,
    first: fail,
    run: fail,
  };
  return {
    prepare: () => statement,
    batch: fail,
    exec: fail,
    dump: fail,
    withSession: () => {
      throw new Error(message);
    },
  } as unknown as D1Database;
}

/** A `RATE_LIMITER` namespace whose every object answers `hit` with `hit`. */
export function fakeLimiter(hit: (limit: number, windowMs: number) => Promise<RateLimitDecision> | RateLimitDecision) {
  return {
    idFromName: (name: string) => ({ toString: () => name, name }),
    get: () => ({ hit: async (limit: number, windowMs: number) => hit(limit, windowMs) }),
  };
}

export interface CapturedLogs {
  /** Every line written with console.log / console.error / console.warn / console.info / console.debug, in order. */
  lines: string[];
  /** The lines that parse as JSON objects. */
  entries(): Record<string, unknown>[];
}

/** Captures (and silences) console output until `vi.restoreAllMocks()`. */
export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  const record = (...args: unknown[]) => {
    lines.push(
      args.map((a) => (typeof a === "string" ? a : a instanceof Error ? `${a.stack ?? a.message}` : JSON.stringify(a))).join(" "),
    );
  };
  const spies: MockInstance[] = (["log", "error", "warn", "info", "debug"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation(record),
  );
  void spies;
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

/** Silences the one access-log line per request (tests that assert on logs use `captureLogs`). */
export function quietLogs(): void {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface ErrorBody {
  error: string;
  code: string;
  details?: unknown;
  meta: { requestId: string; timestamp: string };
}

/** A response's JSON body, typed as an error envelope unless told otherwise (the test asserts the shape). */
export const readJson = async <T = ErrorBody>(res: Response): Promise<T> => (await res.json()) as T;

/** A well-formed key that no tenant holds. */
export const unknownKey = () =>
  `mpk_${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")}`;
