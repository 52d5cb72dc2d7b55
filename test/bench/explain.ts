// Query plans of what a scenario's handler asks D1, against the seeded database: the scenario's `explain` calls the
// app's own db/* function (the one its handler calls, with the same arguments) over a D1 client that records each
// statement; each is then run through `EXPLAIN QUERY PLAN` and, if it is a SELECT, executed once more for D1's own
// `rows_read` and `duration` figures.
import { type Db, getDb } from "../../src/db/client.ts";
import { remoteD1 } from "./seed.ts";

export interface QueryPlan {
  sql: string;
  params: unknown[];
  /** EXPLAIN QUERY PLAN's detail lines, indented by depth. */
  plan: string[];
  /** D1's meta of one execution of the statement (SELECT only): rows read and SQL time (ms), best of three. */
  rowsRead?: number;
  ms?: number;
  /** Plan lines worth a look: a table scanned without an index, a temp b-tree for ORDER BY / GROUP BY / DISTINCT. */
  flags: string[];
}

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

function indent(rows: PlanRow[]): string[] {
  const depth = new Map<number, number>([[0, -1]]);
  return rows.map((r) => {
    const d = (depth.get(r.parent) ?? -1) + 1;
    depth.set(r.id, d);
    return `${"  ".repeat(d)}${r.detail}`;
  });
}

function flagsOf(lines: string[]): string[] {
  const flags: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    // "SCAN t" alone is a full table scan; "SCAN t USING [COVERING] INDEX i" walks a whole index (no key bound).
    if (/^SCAN \S+( AS \S+)?$/.test(line)) flags.push(`full table scan: ${line}`);
    else if (/^SCAN .* USING (COVERING )?INDEX/.test(line)) flags.push(`whole-index scan: ${line}`);
    if (/USE TEMP B-TREE/.test(line)) flags.push(line);
  }
  return flags;
}

export async function explain(d1Url: string, d1: D1Database, run: (db: Db) => Promise<unknown>): Promise<QueryPlan[]> {
  const recorded: { sql: string; params: unknown[] }[] = [];
  const recording = remoteD1(d1Url, { onStatement: (sql, params) => recorded.push({ sql, params }) });
  await run(getDb(recording));
  const plans: QueryPlan[] = [];
  for (const { sql, params } of recorded) {
    const rows = await d1
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<PlanRow>();
    const plan = indent(rows.results);
    const out: QueryPlan = { sql, params, plan, flags: flagsOf(plan) };
    if (/^\s*select\b/i.test(sql)) {
      for (let i = 0; i < 3; i++) {
        const { meta } = await d1
          .prepare(sql)
          .bind(...params)
          .all();
        out.rowsRead = meta.rows_read;
        out.ms = Math.min(out.ms ?? Number.POSITIVE_INFINITY, meta.duration);
      }
    }
    plans.push(out);
  }
  return plans;
}
