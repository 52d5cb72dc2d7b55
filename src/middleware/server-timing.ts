import type { MiddlewareHandler } from "hono";
import { getConfig } from "../config.ts";
import type { AppEnv } from "../types.ts";

/**
 * Query accounting for development and benchmark builds (`SERVER_TIMING=on`).
 *
 * When on, the request runs against a per-request view of `c.env` whose `DB` and `RATE_LIMITER` bindings count and
 * time what the request does, and the response carries:
 *
 *   Server-Timing: d1;desc="statements=N";dur=X, do;desc="calls=M";dur=Y, app;dur=Z
 *
 * - `statements`: D1 statements issued by the request (`first`/`all`/`run`/`raw` count 1, `batch([...])` counts each
 *   statement of the batch, `exec(sql)` counts the statements D1 reports having run). Counted when issued, so a
 *   statement started in `waitUntil` before the response is built is included; one started later is not.
 * - `d1` dur: the summed wall time of those calls (milliseconds; concurrent calls each count in full).
 * - `do`: calls on Durable Object stubs obtained from `RATE_LIMITER` (RPC methods and `fetch`), and their summed time.
 * - `app`: the time spent in the rest of the middleware chain.
 *
 * Times come from `performance.now()`, which in Workers advances only across I/O: they measure I/O waits, not CPU.
 * When off (the default and production), this middleware is one cached config lookup and `next()`.
 */
export function serverTiming(): MiddlewareHandler<AppEnv> {
  return async function serverTiming(c, next) {
    if (!getConfig(c.env).serverTiming) return next();

    const acc = newAccount();
    const env = c.env;
    // A per-request view: the shared `env` object is never mutated. Everything else is read through the prototype.
    c.env = Object.create(env, {
      DB: { value: countingD1(env.DB, acc), enumerable: true },
      RATE_LIMITER: { value: timedNamespace(env.RATE_LIMITER, acc), enumerable: true },
    }) as Env;
    const start = performance.now();
    try {
      await next();
    } finally {
      c.env = env;
    }
    const value = formatServerTiming(acc, performance.now() - start);
    try {
      c.res.headers.append("Server-Timing", value);
    } catch {
      // Immutable headers (a response passed through from elsewhere): copy it.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.append("Server-Timing", value);
    }
  };
}

export interface Account {
  statements: number;
  d1Ms: number;
  doCalls: number;
  doMs: number;
}

const newAccount = (): Account => ({ statements: 0, d1Ms: 0, doCalls: 0, doMs: 0 });

const ms = (n: number) => Math.round(n * 100) / 100;

export function formatServerTiming(acc: Account, appMs: number): string {
  return [
    `d1;desc="statements=${acc.statements}";dur=${ms(acc.d1Ms)}`,
    `do;desc="calls=${acc.doCalls}";dur=${ms(acc.doMs)}`,
    `app;dur=${ms(appMs)}`,
  ].join(", ");
}

/** Parses the header written by `formatServerTiming` (used by the benchmark and tests). */
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

async function timed<T>(acc: Account, kind: "d1" | "do", count: number, run: () => Promise<T>): Promise<T> {
  if (kind === "d1") acc.statements += count;
  else acc.doCalls += count;
  const start = performance.now();
  try {
    return await run();
  } finally {
    const elapsed = performance.now() - start;
    if (kind === "d1") acc.d1Ms += elapsed;
    else acc.doMs += elapsed;
  }
}

const INNER = Symbol("inner statement");

type Counted = D1PreparedStatement & { [INNER]: D1PreparedStatement };

function countingStatement(inner: D1PreparedStatement, acc: Account): Counted {
  const wrapped = {
    [INNER]: inner,
    bind: (...values: unknown[]) => countingStatement(inner.bind(...values), acc),
    first: (column?: string) => timed(acc, "d1", 1, () => (column === undefined ? inner.first() : inner.first(column))),
    run: () => timed(acc, "d1", 1, () => inner.run()),
    all: () => timed(acc, "d1", 1, () => inner.all()),
    raw: (options?: { columnNames?: boolean }) => timed(acc, "d1", 1, () => inner.raw(options as { columnNames: true })),
  };
  return wrapped as unknown as Counted;
}

const unwrap = (s: D1PreparedStatement) => (s as Partial<Counted>)[INNER] ?? s;

interface Preparer {
  prepare(query: string): D1PreparedStatement;
  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
}

function countingPreparer<T extends Preparer>(inner: T, acc: Account) {
  return {
    prepare: (query: string) => countingStatement(inner.prepare(query), acc),
    batch: <R = unknown>(statements: D1PreparedStatement[]) =>
      timed(acc, "d1", statements.length, () => inner.batch<R>(statements.map(unwrap))),
  };
}

function countingD1(d1: D1Database, acc: Account): D1Database {
  const wrapped = {
    ...countingPreparer(d1, acc),
    exec: async (query: string) => {
      const start = performance.now();
      try {
        const result = await d1.exec(query);
        acc.statements += result.count;
        return result;
      } finally {
        acc.d1Ms += performance.now() - start;
      }
    },
    dump: () => d1.dump(),
    withSession: (constraint?: string) => {
      const session = d1.withSession(constraint as D1SessionConstraint);
      return { ...countingPreparer(session, acc), getBookmark: () => session.getBookmark() };
    },
  };
  return wrapped as unknown as D1Database;
}

/** Every function-valued property of a stub is an RPC method (or `fetch`): time each call. */
function timedStub<T extends object>(stub: T, acc: Account): T {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof prop !== "string" || prop === "then" || typeof value !== "function") return value;
      return (...args: unknown[]) =>
        timed(acc, "do", 1, async () => (target as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args));
    },
  });
}

function timedNamespace<T extends DurableObjectNamespace>(ns: T, acc: Account): T {
  return new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "get" || prop === "getByName") {
        return (...args: unknown[]) => timedStub((value as (...a: unknown[]) => object).apply(target, args), acc);
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
