// Seeding, from Node, into the D1 database the workers share (through the `d1` helper worker, see remoteD1).
// Tenants and keys go through the app's own code (insertTenant, insertKey, generateApiKey); large tables are generated
// in SQL by `insertSeries`, which needs no bound parameter per row (D1 allows at most 100 per statement).

import { generateApiKey } from "../../src/core/keys/api-key.ts";
import { SCOPES } from "../../src/core/keys/scopes.ts";
import { insertKey } from "../../src/db/api-keys.ts";
import { type Db, getDb } from "../../src/db/client.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { insertTenant } from "../../src/db/tenants.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";

export interface RemoteD1Options {
  /** Called with each statement before it is sent (explain.ts records what a db function issues). */
  onStatement?: (sql: string, params: unknown[]) => void;
  /**
   * Sends the `batch()` calls made in the same turn of the event loop as one D1 batch (one transaction, one round
   * trip), each caller still getting its own results: 1,000 concurrent `insertPaywallWithinCap` calls cost ~10 round
   * trips instead of 1,000 (≈ 6 ms each here). Each call's statements stay together and in order, so the app's atomic
   * batches (insert + cap check) keep their meaning; a failing statement fails every batch of its group.
   */
  coalesceBatches?: boolean;
}

/**
 * A D1Database-shaped client for the bench's `d1` helper worker (fixtures/d1-remote.ts): `prepare`/`bind` build the
 * statement locally, each execution (or batch) is one HTTP POST executed against the real D1 binding in workerd.
 */
export function remoteD1(url: string, options: RemoteD1Options = {}): D1Database {
  const { onStatement } = options;
  const call = async (op: Record<string, unknown>): Promise<unknown> => {
    if (onStatement) {
      const list =
        op.op === "batch" ? (op.statements as { sql: string; params: unknown[] }[]) : [op as { sql: string; params: unknown[] }];
      for (const s of list) onStatement(s.sql, s.params ?? []);
    }
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(op) });
    const out = (await res.json()) as { ok: boolean; result?: unknown; error?: string };
    if (!out.ok) throw new Error(out.error ?? `D1 helper answered ${res.status}`);
    return out.result;
  };
  const statement = (sql: string, params: unknown[]) => {
    const s = {
      sql,
      params,
      bind: (...values: unknown[]) => statement(sql, values),
      all: () => call({ op: "all", sql, params }),
      run: () => call({ op: "run", sql, params }),
      first: (column?: string) => call({ op: "first", sql, params, column }),
      raw: (options?: { columnNames?: boolean }) => call({ op: "raw", sql, params, columnNames: options?.columnNames }),
    };
    return s;
  };
  type Local = ReturnType<typeof statement>;
  type Sql = { sql: string; params: unknown[] };
  const plain = (statements: Local[]): Sql[] => statements.map(({ sql, params }) => ({ sql, params }));
  let pending: { statements: Sql[]; resolve: (r: unknown) => void; reject: (e: unknown) => void }[] | undefined;
  const flush = async () => {
    const group = pending ?? [];
    pending = undefined;
    try {
      const results = (await call({ op: "batches", batches: group.map((g) => g.statements) })) as unknown[];
      for (const [i, g] of group.entries()) g.resolve(results[i]);
    } catch (err) {
      for (const g of group) g.reject(err);
    }
  };
  const db = {
    prepare: (sql: string) => statement(sql, []),
    batch: (statements: Local[]) => {
      if (!options.coalesceBatches) return call({ op: "batch", statements: plain(statements) });
      return new Promise((resolve, reject) => {
        if (!pending) {
          pending = [];
          setImmediate(() => void flush());
        }
        pending.push({ statements: plain(statements), resolve, reject });
      });
    },
    exec: (sql: string) => call({ op: "exec", sql }),
  };
  return db as unknown as D1Database;
}

export interface SeededTenant {
  tenant: Tenant;
  /** Raw keys (all scopes, active, no IP allowlist), as the tenant would hold them. */
  keys: string[];
}

export interface ApiResponse {
  status: number;
  body: string;
  /** The parsed body, or undefined if it is not JSON. */
  json: unknown;
}

export interface BenchContext {
  /** drizzle over the shared D1: use the app's db/* functions with it. */
  db: Db;
  /** The raw D1 binding, for bulk SQL. */
  d1: D1Database;
  /** Base URL of the app worker (production bundle, SERVER_TIMING off), for seeding through the API. */
  appUrl: string;
  /** The same app's payment origin (its `PAYMENT_BASE_URL`): the gateway's buyer-facing URLs. */
  paymentUrl: string;
  /** The peer row's worker (fixtures/x402-peer.ts). */
  peerUrl: string;
  /** Progress line on stderr (the runner's log). */
  log(msg: string): void;
  /** One request to the app with `Authorization: Bearer <key>`; a JSON body if `body` is given. */
  api(method: string, path: string, key: string, body?: unknown): Promise<ApiResponse>;
  /** 10 tenants × 20 keys, created before any scenario. */
  base: SeededTenant[];
  /** The 200 keys of `base`, in rotation order (one key of each tenant in turn). */
  keys: string[];
  newTenant(options?: { keys?: number }): Promise<SeededTenant>;
  /**
   * Runs `seed` once per context and name, whatever the number of callers (scenarios sharing a tenant share its data);
   * concurrent callers get the same promise.
   */
  once<T>(name: string, seed: () => Promise<T>): Promise<T>;
}

export function createContext(
  d1: D1Database,
  appUrl: string,
  log: (msg: string) => void = () => {},
  paymentUrl = appUrl,
  peerUrl = "",
): BenchContext {
  const db = getDb(d1);
  const memo = new Map<string, Promise<unknown>>();
  const ctx: BenchContext = {
    db,
    d1,
    appUrl,
    paymentUrl,
    peerUrl,
    log,
    api: async (method, path, key, body) => {
      const res = await fetch(appUrl + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, body: text, json };
    },
    base: [],
    keys: [],
    newTenant: (options = {}) => seedTenant(db, options.keys ?? 1),
    once: <T>(name: string, seed: () => Promise<T>) => {
      let p = memo.get(name) as Promise<T> | undefined;
      if (!p) {
        p = seed();
        memo.set(name, p);
      }
      return p;
    },
  };
  return ctx;
}

/**
 * Runs `count` tasks, `concurrency` at a time, in index order; rejects on the first failure (the rest still settle).
 */
export async function inPool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (next < count && failed === undefined) {
      const i = next++;
      try {
        await task(i);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failed !== undefined) throw failed;
}

export async function seedTenant(db: Db, keyCount: number): Promise<SeededTenant> {
  const id = newId("ten");
  const tenant = await insertTenant(db, {
    id,
    email: `${id}@bench.example.com`,
    name: `Bench ${id}`,
    walletAddress: `0x${randomHex(20)}`,
    tempoWalletAddress: `0x${randomHex(20)}`,
  });
  const keys = await Promise.all(
    Array.from({ length: keyCount }, async (_, i) => {
      const { key, keyHash, keyPrefix } = await generateApiKey();
      await insertKey(db, {
        id: newId("key"),
        tenantId: tenant.id,
        name: `bench key ${i + 1}`,
        keyHash,
        keyPrefix,
        scopes: [...SCOPES],
        status: "active",
        expiresAt: null,
        allowedIps: [],
      });
      return key;
    }),
  );
  return { tenant, keys };
}

/** `tenants` tenants with `keysPerTenant` keys each (20 is the per-tenant maximum of active keys). */
export async function seedBase(ctx: BenchContext, tenants = 10, keysPerTenant = 20): Promise<void> {
  ctx.base = await Promise.all(Array.from({ length: tenants }, () => seedTenant(ctx.db, keysPerTenant)));
  ctx.keys = [];
  for (let k = 0; k < keysPerTenant; k++) for (const t of ctx.base) ctx.keys.push(t.keys[k]!);
}

/**
 * Inserts `count` generated rows in chunks, each one statement with no per-row parameters:
 *
 *   INSERT INTO <table> (<columns>)
 *   WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2)
 *   SELECT <expressions over n> FROM seq
 *
 * `columns` maps each column to an SQL expression of `n` (1-based row number) and of `?3`, `?4`, … bound to `params`,
 * e.g. `{ id: "'evt_' || printf('%024x', n)", tenant_id: "?3", created_at: "?4 + n" }`.
 */
export async function insertSeries(
  d1: D1Database,
  table: string,
  count: number,
  columns: Record<string, string>,
  params: unknown[] = [],
  chunk = 25_000,
): Promise<void> {
  const names = Object.keys(columns);
  const sql = `INSERT INTO "${table}" (${names.map((c) => `"${c}"`).join(", ")}) WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2) SELECT ${names.map((c) => columns[c]).join(", ")} FROM seq`;
  const statements: D1PreparedStatement[] = [];
  for (let from = 1; from <= count; from += chunk) {
    statements.push(d1.prepare(sql).bind(from, Math.min(count, from + chunk - 1), ...params));
  }
  // Sequential, not one batch: each chunk is a short write and the runtime stays responsive.
  for (const s of statements) await s.run();
}

/**
 * Clones one real row (created through the app's code, so every JSON and encrypted column is valid) `count` times,
 * in SQL, overriding some columns with expressions of `n` (1-based) and of `?4`, `?5`, … bound to `params`:
 *
 *   cloneSeries(d1, "paywalls", template.id, 100_000, {
 *     id: "'pw_' || printf('%024x', n)", slug: "'bench-' || n", created_at: "?4 + n" }, [Date.now()])
 *
 * Columns not overridden keep the template's value. The template row stays.
 */
export async function cloneSeries(
  d1: D1Database,
  table: string,
  templateId: string,
  count: number,
  overrides: Record<string, string>,
  params: unknown[] = [],
  chunk = 25_000,
): Promise<void> {
  const info = await d1.prepare(`SELECT name FROM pragma_table_info('${table.replaceAll("'", "''")}')`).all<{ name: string }>();
  const columns = info.results.map((r) => r.name);
  const unknown = Object.keys(overrides).filter((c) => !columns.includes(c));
  if (unknown.length > 0) throw new Error(`cloneSeries(${table}): no column ${unknown.join(", ")}`);
  const select = columns.map((c) => overrides[c] ?? `tpl."${c}"`).join(", ");
  const sql = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2) SELECT ${select} FROM seq, "${table}" AS tpl WHERE tpl.id = ?3`;
  for (let from = 1; from <= count; from += chunk) {
    await d1
      .prepare(sql)
      .bind(from, Math.min(count, from + chunk - 1), templateId, ...params)
      .run();
  }
}
