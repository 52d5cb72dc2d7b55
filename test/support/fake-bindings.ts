// Stand-ins for the Worker's bindings, passed to the app through the client's `env` option (client.ts):
// D1 bindings that fail, record, hold or sabotage calls, a rate-limiter namespace with a chosen answer, and a Durable
// Object namespace whose calls fail where a test says.
//
import { env } from "cloudflare:workers";
import type { AuthorizeAnswer, AuthorizeRequest, RateLimitDecision } from "../../src/core/keys/record.ts";
import { keyRecordOf, refusalOf } from "../../src/core/keys/record.ts";
import { findKeyWithTenantByHash } from "../../src/db/api-keys.ts";
import { getDb } from "../../src/db/client.ts";

// faultyD1: a D1 binding that forwards to a real one and fails chosen calls with the errors D1 returns in production.
//
// The messages are D1's documented transient errors (developers.cloudflare.com/d1/observability/debug-d1,
// "List of D1_ERRORs"). The binding (workerd `d1-api.ts`) throws them as `new Error("D1_ERROR: " + message,
// { cause: new Error(message) })`. A connection that breaks before D1 answers surfaces as the runtime's own
// `Error("Network connection lost.")` with `retryable = true` and no `D1_ERROR` prefix: that is `disconnected`.

/** D1's transient production errors, as the binding words them after `D1_ERROR: `. */
export const D1_MESSAGES = {
  networkLost: "Network connection lost.",
  overloaded: "D1 DB is overloaded. Too many requests queued.",
  queuedTooLong: "D1 DB is overloaded. Requests queued for too long.",
  storageTimeout: "D1 DB storage operation exceeded timeout which caused object to be reset.",
  storageReset: "Internal error in D1 DB storage caused object to be reset.",
  codeUpdated: "D1 DB reset because its code was updated.",
  remoteNode: "Cannot resolve D1 DB due to transient issue on remote node.",
} as const;

export type D1Fault = keyof typeof D1_MESSAGES | "disconnected";

/** The four faults every scenario is run with: three D1 failures, and the runtime's own disconnect. */
export const MAIN_FAULTS: D1Fault[] = ["networkLost", "overloaded", "storageTimeout", "disconnected"];

/** A fresh error exactly as the D1 binding throws it in production. */
export function d1Error(fault: D1Fault): Error {
  if (fault === "disconnected") return Object.assign(new Error("Network connection lost."), { retryable: true });
  const message = D1_MESSAGES[fault];
  return new Error(`D1_ERROR: ${message}`, { cause: new Error(message) });
}

export type D1Method = "first" | "all" | "run" | "raw" | "batch" | "exec";

/** One round trip to D1: a statement executed on its own, a batch, or an `exec`. */
export interface D1Call {
  /** 0-based position of the call among all calls made through this binding. */
  index: number;
  method: D1Method;
  /** The SQL of the statement, or of every statement of the batch, in order. */
  sql: string[];
}

export interface FaultRule {
  /** Which call fails (the first `times` calls that match). */
  match: (call: D1Call) => boolean;
  fault: D1Fault;
  /**
   * `before` (default): D1 never ran the call. `after`: D1 ran (and committed) it, then the answer was lost.
   * `inside`: for a batch, statement `statement` fails inside D1's transaction, after the earlier ones ran.
   */
  timing?: "before" | "after" | "inside";
  /** With `timing: "inside"`: the 0-based statement of the batch that fails. */
  statement?: number;
  /** How many matching calls fail; default 1. */
  times?: number;
}

export interface FaultyD1 {
  db: D1Database;
  /** Every call, in order. */
  calls: D1Call[];
  /** The calls that failed, in order. */
  injected: D1Call[];
}

/** Matches the call at this position. */
export const nth =
  (index: number) =>
  (call: D1Call): boolean =>
    call.index === index;

/** Matches a call with a statement whose SQL matches `pattern`. */
export const sqlMatching =
  (pattern: RegExp) =>
  (call: D1Call): boolean =>
    call.sql.some((s) => pattern.test(s));

/** Matches every batch. */
export const anyBatch = (call: D1Call): boolean => call.method === "batch";

/** Matches every call. */
export const everyCall = (): boolean => true;

// A statement D1 accepts at prepare time and that fails while it runs: inside a batch, the statements
// before it have already executed in the batch's transaction, which D1 then rolls back.
const FAILS_AT_RUNTIME = "SELECT json('{') AS injected_fault";

class FaultyStatement {
  readonly owner: FaultyD1Impl;
  readonly real: D1PreparedStatement;
  readonly sql: string;

  constructor(owner: FaultyD1Impl, real: D1PreparedStatement, sql: string) {
    this.owner = owner;
    this.real = real;
    this.sql = sql;
  }

  bind(...values: unknown[]): FaultyStatement {
    return new FaultyStatement(this.owner, this.real.bind(...values), this.sql);
  }

  first(column?: string): Promise<unknown> {
    return this.owner.execute("first", [this.sql], () => (column === undefined ? this.real.first() : this.real.first(column)));
  }

  all(): Promise<unknown> {
    return this.owner.execute("all", [this.sql], () => this.real.all());
  }

  run(): Promise<unknown> {
    return this.owner.execute("run", [this.sql], () => this.real.run());
  }

  raw(options?: { columnNames?: boolean }): Promise<unknown> {
    return this.owner.execute("raw", [this.sql], () =>
      options?.columnNames ? this.real.raw({ columnNames: true }) : this.real.raw(),
    );
  }
}

class FaultyD1Impl {
  readonly calls: D1Call[] = [];
  readonly injected: D1Call[] = [];
  readonly real: D1Database;
  readonly rules: FaultRule[];
  private readonly remaining: number[];

  constructor(real: D1Database, rules: FaultRule[]) {
    this.real = real;
    this.rules = rules;
    this.remaining = rules.map((r) => r.times ?? 1);
  }

  prepare(sql: string): FaultyStatement {
    return new FaultyStatement(this, this.real.prepare(sql), sql);
  }

  batch(statements: unknown[]): Promise<unknown> {
    // The real batch receives the real statements.
    const real = statements.map((s) => (s instanceof FaultyStatement ? s.real : (s as D1PreparedStatement)));
    const sql = statements.map((s) => (s instanceof FaultyStatement ? s.sql : "<unwrapped statement>"));
    return this.execute("batch", sql, () => this.real.batch(real), real);
  }

  exec(sql: string): Promise<unknown> {
    return this.execute("exec", [sql], () => this.real.exec(sql));
  }

  dump(): Promise<ArrayBuffer> {
    return this.real.dump();
  }

  /**
   * A session of the faulty binding: its statements are the binding's own (recorded, faults applied). Locally every
   * session reads the one copy of the database, the primary, as the plain binding does.
   */
  withSession(): D1DatabaseSession {
    return {
      prepare: (sql: string) => this.prepare(sql),
      batch: (statements: unknown[]) => this.batch(statements),
      getBookmark: () => null,
    } as unknown as D1DatabaseSession;
  }

  async execute(
    method: D1Method,
    sql: string[],
    run: () => Promise<unknown>,
    batchStatements?: D1PreparedStatement[],
  ): Promise<unknown> {
    const call: D1Call = { index: this.calls.length, method, sql };
    this.calls.push(call);
    const ruleIndex = this.rules.findIndex((rule, i) => (this.remaining[i] ?? 0) > 0 && rule.match(call));
    const rule = this.rules[ruleIndex];
    if (!rule) return run();
    this.remaining[ruleIndex] = (this.remaining[ruleIndex] ?? 0) - 1;
    this.injected.push(call);
    const timing = rule.timing ?? "before";
    if (timing === "before") throw d1Error(rule.fault);
    if (timing === "after") {
      await run();
      throw d1Error(rule.fault);
    }
    if (!batchStatements) throw new Error(`faultyD1: timing "inside" needs a batch, got ${method}`);
    const at = rule.statement ?? 0;
    if (at < 0 || at >= batchStatements.length) throw new Error(`faultyD1: the batch has no statement ${at}`);
    const sabotaged = batchStatements.map((s, i) => (i === at ? this.real.prepare(FAILS_AT_RUNTIME) : s));
    try {
      await this.real.batch(sabotaged);
    } catch {
      throw d1Error(rule.fault);
    }
    throw new Error("faultyD1: the sabotaged batch did not fail");
  }
}

/** Wraps `real`: every call passes through, except those a rule matches, which fail with D1's production error. */
export function faultyD1(real: D1Database, rules: FaultRule[] = []): FaultyD1 {
  const impl = new FaultyD1Impl(real, rules);
  return { db: impl as unknown as D1Database, calls: impl.calls, injected: impl.injected };
}

/**
 * Every place a fault can be injected into a request whose D1 calls were `calls` (recorded on a healthy run):
 * each call before it runs, and for a batch each of its statements inside the transaction.
 */
export interface FaultPosition {
  call: number;
  /** For a batch: the statement that fails inside it; absent: the whole call fails before it runs. */
  statement?: number;
  label: string;
}

export function faultPositions(calls: D1Call[]): FaultPosition[] {
  return calls.flatMap((call): FaultPosition[] => {
    const head = (s: string) => s.replace(/\s+/g, " ").slice(0, 60);
    const whole: FaultPosition = { call: call.index, label: `#${call.index} ${call.method} [${call.sql.map(head).join(" ; ")}]` };
    if (call.method !== "batch" || call.sql.length < 2) return [whole];
    return [
      whole,
      ...call.sql.map((s, i) => ({ call: call.index, statement: i, label: `#${call.index} batch statement ${i} [${head(s)}]` })),
    ];
  });
}

/** The rule that fails `position` with `fault`. */
export function ruleAt(position: FaultPosition, fault: D1Fault): FaultRule {
  return position.statement === undefined
    ? { match: nth(position.call), fault }
    : { match: nth(position.call), fault, timing: "inside", statement: position.statement };
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
    withSession: () => ({ prepare: () => statement, batch: fail, getBookmark: () => null }),
  } as unknown as D1Database;
}

/** The real limiter namespace, recording the name of every object asked. */
export function recordingLimiter() {
  const names: string[] = [];
  const ns = {
    idFromName: (name: string) => {
      names.push(name);
      return env.RATE_LIMITER.idFromName(name);
    },
    get: (id: DurableObjectId) => env.RATE_LIMITER.get(id),
  };
  return { ns, names };
}

/**
 * A `RATE_LIMITER` namespace whose every object answers `hit` with `hit`; `stats` counts the calls that reach it. A
 * key's object (`authorize`) judges the key as the real one does, from its row in the test database and the same
 * rules (core/keys/record.ts), then counts the request with `hit`: a stand-in for the object's answer, not its memory.
 */
export function fakeLimiter(hit: (limit: number, windowMs: number) => Promise<RateLimitDecision> | RateLimitDecision) {
  const stats = { idFromName: 0, get: 0, hit: 0 };
  const count = async (limit: number, windowMs: number) => {
    stats.hit++;
    return hit(limit, windowMs);
  };
  return {
    stats,
    idFromName: (name: string) => {
      stats.idFromName++;
      return { name, toString: () => name, equals: () => false };
    },
    get: () => {
      stats.get++;
      return {
        hit: count,
        authorize: async (request: AuthorizeRequest): Promise<AuthorizeAnswer> => {
          const found = await findKeyWithTenantByHash(getDb(env.DB), request.keyHash);
          if (!found) return { kind: "unknown", d1Statements: 1 };
          const record = keyRecordOf(found.key, found.tenant);
          const reason = refusalOf(record, Date.now(), request.clientIp);
          if (reason) return { kind: "refused", reason, d1Statements: 1 };
          const decision = await count(request.limit, request.windowMs);
          const { keyId, keyName, keyPrefix, scopes, tenant } = record;
          return { kind: "admitted", key: { keyId, keyName, keyPrefix, scopes, tenant }, decision, d1Statements: 1 };
        },
        forget: async () => {},
      };
    },
  };
}

/**
 * A D1 binding that holds writes until `release()`: every `batch`, and every statement whose SQL matches
 * `holdStatements`, waits. `reached(n)` resolves once n writes are waiting. With it a test can order two
 * requests exactly: one checks, then stalls before its write while the other runs to completion.
 */
export function gatedD1(holdStatements: RegExp = /^$/, real: D1Database = env.DB) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let waiting = 0;
  const watchers: { n: number; resolve: () => void }[] = [];
  const arrive = async () => {
    waiting++;
    for (const w of watchers.filter((w) => waiting >= w.n)) w.resolve();
    await gate;
  };
  const held = (statement: D1PreparedStatement): D1PreparedStatement => {
    const run =
      (method: "all" | "raw" | "run" | "first") =>
      async (...args: unknown[]) => {
        await arrive();
        return (statement[method] as (...a: unknown[]) => unknown)(...args);
      };
    return {
      // In a batch the real statement runs (the batch itself waits at the gate).
      real: statement,
      bind: (...values: unknown[]) => held(statement.bind(...values)),
      all: run("all"),
      raw: run("raw"),
      run: run("run"),
      first: run("first"),
    } as unknown as D1PreparedStatement;
  };
  const db = {
    prepare: (query: string) => (holdStatements.test(query) ? held(real.prepare(query)) : real.prepare(query)),
    batch: async (statements: D1PreparedStatement[]) => {
      await arrive();
      return real.batch(statements.map((s) => (s as D1PreparedStatement & { real?: D1PreparedStatement }).real ?? s));
    },
    exec: (query: string) => real.exec(query),
    dump: () => real.dump(),
    withSession: () => sessionOf(db),
  } as unknown as D1Database;
  return {
    db,
    reached: (n: number) =>
      new Promise<void>((resolve) => {
        if (waiting >= n) resolve();
        else watchers.push({ n, resolve });
      }),
    release: () => open(),
  };
}

/**
 * A D1 binding whose answers to statements matching `pattern` arrive late: each runs at once (D1 has answered), and its
 * answer is held until `release()`, as an answer still on its way over the network would be. `reached(n)` resolves
 * once n answers are held. With it a test can change the database between a read and its answer's arrival.
 */
export function lateD1(pattern: RegExp, real: D1Database = env.DB) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let held = 0;
  const watchers: { n: number; resolve: () => void }[] = [];
  const late = (statement: D1PreparedStatement): D1PreparedStatement => {
    const run =
      (method: "all" | "raw" | "run" | "first") =>
      async (...args: unknown[]) => {
        const answer = await (statement[method] as (...a: unknown[]) => Promise<unknown>)(...args);
        held++;
        for (const w of watchers.filter((w) => held >= w.n)) w.resolve();
        await gate;
        return answer;
      };
    return {
      bind: (...values: unknown[]) => late(statement.bind(...values)),
      all: run("all"),
      raw: run("raw"),
      run: run("run"),
      first: run("first"),
    } as unknown as D1PreparedStatement;
  };
  const db = {
    prepare: (query: string) => (pattern.test(query) ? late(real.prepare(query)) : real.prepare(query)),
    batch: (statements: D1PreparedStatement[]) => real.batch(statements),
    exec: (query: string) => real.exec(query),
    dump: () => real.dump(),
    withSession: () => sessionOf(db),
  } as unknown as D1Database;
  return {
    db,
    reached: (n: number) =>
      new Promise<void>((resolve) => {
        if (held >= n) resolve();
        else watchers.push({ n, resolve });
      }),
    release: () => open(),
  };
}

/**
 * A D1 session of a stand-in binding: its statements are the stand-in's own (held, gated, failing as it says).
 * Locally every session reads the one copy of the database, as the plain binding does.
 */
export const sessionOf = (db: Pick<D1Database, "prepare" | "batch">): D1DatabaseSession =>
  ({
    prepare: (query: string) => db.prepare(query),
    batch: (statements: D1PreparedStatement[]) => db.batch(statements),
    getBookmark: () => null,
  }) as unknown as D1DatabaseSession;

/**
 * A D1 binding with a read replica that has applied no write yet, as a replica far behind its primary: a session that
 * may read a replica (`first-unconstrained`) reads no rows at all; a session at the primary (`first-primary`) or at a
 * bookmark (which this replica has not reached) reads the real database. The constraint of every session is recorded.
 */
export function laggingReplicaD1(real: D1Database = env.DB): { db: D1Database; constraints: string[] } {
  const constraints: string[] = [];
  const none = { results: [], success: true, meta: {} };
  const statement = {
    bind: () => statement,
    all: async () => none,
    raw: async () => [],
    first: async () => null,
    run: async () => none,
  };
  const replica = {
    prepare: () => statement,
    batch: async (statements: unknown[]) => statements.map(() => none),
    getBookmark: () => null,
  };
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "withSession")
        return (constraint = "first-unconstrained") => {
          constraints.push(constraint);
          return constraint === "first-unconstrained" ? replica : target.withSession(constraint);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, constraints };
}

// faultyObjects: a Durable Object namespace that forwards to a real one and fails chosen calls on its stubs.

/** One call on a stub of `faultyObjects`: the object's name (`getByName`), the method called and its arguments. */
export interface ObjectCall {
  object: string;
  method: string;
  args: unknown[];
}

/**
 * Wraps `real`'s `getByName` stubs: every call passes through, except those `fault` places: `before` (the call never
 * reaches the object) or `after` (the object ran it, and its caller never heard). Either way the caller gets the
 * runtime's `Network connection lost.`, as when the object, or the Worker calling it, went away. `calls` lists every call.
 */
export function faultyObjects<T extends Rpc.DurableObjectBranded>(
  real: DurableObjectNamespace<T>,
  fault: (call: ObjectCall) => "before" | "after" | undefined,
): { namespace: DurableObjectNamespace<T>; calls: ObjectCall[] } {
  const calls: ObjectCall[] = [];
  const lost = () => Object.assign(new Error("Network connection lost."), { retryable: true });
  const stubOf = (object: string) => {
    const stub = real.getByName(object) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    return new Proxy(stub, {
      get(target, method) {
        if (typeof method !== "string" || method === "then") return undefined;
        return async (...args: unknown[]) => {
          const call = { object, method, args };
          calls.push(call);
          const when = fault(call);
          if (when === "before") throw lost();
          const result = await target[method]!(...args);
          if (when === "after") throw lost();
          return result;
        };
      },
    });
  };
  const namespace = new Proxy(real, {
    get(target, prop) {
      if (prop === "getByName") return stubOf;
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { namespace, calls };
}
