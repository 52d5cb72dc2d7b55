// D1 and Durable Object instrumentation for the `Server-Timing` middleware (SERVER_TIMING=on): wrappers that count and
// time what a request does through its bindings, and the header they sum up to.

export interface Account {
  statements: number;
  d1Ms: number;
  doCalls: number;
  doMs: number;
}

export const newAccount = (): Account => ({ statements: 0, d1Ms: 0, doCalls: 0, doMs: 0 });

const ms = (n: number) => Math.round(n * 100) / 100;

export function formatServerTiming(acc: Account, appMs: number): string {
  return [
    `d1;desc="statements=${acc.statements}";dur=${ms(acc.d1Ms)}`,
    `do;desc="calls=${acc.doCalls}";dur=${ms(acc.doMs)}`,
    `app;dur=${ms(appMs)}`,
  ].join(", ");
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

export function countingD1(d1: D1Database, acc: Account): D1Database {
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

/**
 * Every function-valued property of a stub is an RPC method (or `fetch`): time each call. An answer that reports
 * `d1Statements` (the D1 statements the object ran for the call, e.g. a key's object reading its record) adds them
 * to the request's statements.
 */
function timedStub<T extends object>(stub: T, acc: Account): T {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof prop !== "string" || prop === "then" || typeof value !== "function") return value;
      return (...args: unknown[]) =>
        timed(acc, "do", 1, async () => {
          const answer = await (target as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args);
          const statements = (answer as { d1Statements?: unknown } | null)?.d1Statements;
          if (typeof statements === "number") acc.statements += statements;
          return answer;
        });
    },
  });
}

export function timedNamespace<T extends DurableObjectNamespace>(ns: T, acc: Account): T {
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
