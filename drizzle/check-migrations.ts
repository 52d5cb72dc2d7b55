// Migration safety check: `node drizzle/check-migrations.ts [migrations-dir]`.
//
// Fails (exit 1) when a migration drops, renames or rebuilds a table that another table references by a
// foreign key, unless the migration carries a line `-- safe: <why>`. drizzle-kit's SQLite "table rebuild"
// (`PRAGMA foreign_keys=OFF; CREATE TABLE __new_x …; INSERT INTO __new_x SELECT … FROM x; DROP TABLE x;
// ALTER TABLE __new_x RENAME TO x;`) is the usual way this happens. D1 runs each migration in a transaction
// with foreign keys enforced and ignores `PRAGMA foreign_keys=OFF` there, so `DROP TABLE x` deletes every
// row that references x through `ON DELETE CASCADE` (and fails, or nulls them, for other actions).
//
// The logic is the pure `checkMigrations()`, also run by test/adversarial/migrations.test.ts.

export interface MigrationSource {
  /** File name, e.g. `0003_rebuild_services.sql`. */
  name: string;
  sql: string;
}

export interface ForeignKeyRef {
  /** The referencing (child) table. */
  table: string;
  columns: string[];
  /** The referenced (parent) table. */
  parent: string;
  onDelete: string;
}

export type RiskyAction = "drop" | "rename" | "rebuild";

export interface Finding {
  migration: string;
  table: string;
  action: RiskyAction;
  /** The foreign keys of other tables that point at `table` when the statement runs. */
  dependents: ForeignKeyRef[];
  /** The migration says `PRAGMA foreign_keys=OFF` (which D1 ignores inside a migration). */
  foreignKeysOff: boolean;
  /** The reason given by a `-- safe: <reason>` line, or null. */
  safe: string | null;
  message: string;
}

export interface CheckResult {
  findings: Finding[];
  /** Findings without a `-- safe:` reason: these fail the check. */
  unsafe: Finding[];
  /** The tables and their outgoing foreign keys after the last migration. */
  tables: Map<string, ForeignKeyRef[]>;
}

const SAFE_LINE = /^[ \t]*--[ \t]*safe:[ \t]*(\S.*?)[ \t]*$/im;

/** The statements of a migration, comments removed (quoted text kept intact). */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let i = 0;
  let inTrigger = false;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch === "-" && next === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
      current += " ";
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
      current += " ";
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`" || ch === "[") {
      const close = ch === "[" ? "]" : ch;
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === close) {
          if (close !== "]" && sql[j + 1] === close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      current += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === ";") {
      const text = current.replace(/\s+/g, " ").trim();
      if (!inTrigger && /^CREATE\s+(TEMP\s+|TEMPORARY\s+)?TRIGGER\b/i.test(text) && !/\bEND$/i.test(text)) inTrigger = true;
      if (inTrigger && !/\bEND$/i.test(text)) {
        current += ";";
        i++;
        continue;
      }
      inTrigger = false;
      if (text) statements.push(text);
      current = "";
      i++;
      continue;
    }
    current += ch;
    i++;
  }
  const rest = current.replace(/\s+/g, " ").trim();
  if (rest) statements.push(rest);
  return statements;
}

// An identifier, quoted any SQLite way or bare, optionally schema-qualified (`main.x`).
const IDENT = String.raw`(?:"(?:[^"]|"")+"|\`(?:[^\`]|\`\`)+\`|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)`;
const QUALIFIED = String.raw`(?:${IDENT}\s*\.\s*)?(${IDENT})`;

/** The bare, lower-cased name of an identifier token. */
export function unquote(identifier: string): string {
  const t = identifier.trim();
  const first = t[0];
  if (first === '"' || first === "`")
    return t
      .slice(1, -1)
      .replaceAll(first + first, first)
      .toLowerCase();
  if (first === "[") return t.slice(1, -1).toLowerCase();
  return t.toLowerCase();
}

/** Splits `a, b(c, d), e` at top-level commas. */
function topLevelParts(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") quote = ch;
    else if (ch === "[") quote = "]";
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

const REFERENCES = new RegExp(String.raw`\bREFERENCES\s+${QUALIFIED}`, "i");
const ON_DELETE = /\bON\s+DELETE\s+(SET\s+NULL|SET\s+DEFAULT|CASCADE|RESTRICT|NO\s+ACTION)/i;
const LEADING_IDENT = new RegExp(`^(${IDENT})`);

/** The foreign keys declared by one column or table constraint of a `CREATE TABLE` body. */
function foreignKeysOf(table: string, definition: string): ForeignKeyRef[] {
  const ref = REFERENCES.exec(definition);
  if (!ref) return [];
  const onDelete = (ON_DELETE.exec(definition)?.[1] ?? "NO ACTION").toUpperCase().replace(/\s+/g, " ");
  const parent = unquote(ref[1] as string);
  const tableConstraint = /^(CONSTRAINT\s+\S+\s+)?FOREIGN\s+KEY\s*\(([^)]*)\)/i.exec(definition);
  if (tableConstraint) {
    const columns = (tableConstraint[2] as string).split(",").map(unquote);
    return [{ table, columns, parent, onDelete }];
  }
  const column = LEADING_IDENT.exec(definition)?.[1];
  return [{ table, columns: column ? [unquote(column)] : [], parent, onDelete }];
}

/** The body between the first `(` and its matching `)`. */
function parenthesized(text: string): string | null {
  const open = text.indexOf("(");
  if (open === -1) return null;
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") quote = ch;
    else if (ch === "[") quote = "]";
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return text.slice(open + 1, i);
  }
  return null;
}

const CREATE_TABLE = new RegExp(
  String.raw`^CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${QUALIFIED}\s*(.*)$`,
  "is",
);
const DROP_TABLE = new RegExp(String.raw`^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${QUALIFIED}`, "i");
const RENAME_TABLE = new RegExp(String.raw`^ALTER\s+TABLE\s+${QUALIFIED}\s+RENAME\s+TO\s+(${IDENT})`, "i");
const ADD_COLUMN = new RegExp(String.raw`^ALTER\s+TABLE\s+${QUALIFIED}\s+ADD\s+(?:COLUMN\s+)?(.*)$`, "is");
const INSERT_SELECT = new RegExp(
  String.raw`^INSERT\s+(?:OR\s+\w+\s+)?INTO\s+${QUALIFIED}.*?\bSELECT\b.*?\bFROM\s+${QUALIFIED}`,
  "is",
);
const FOREIGN_KEYS_OFF = /^PRAGMA\s+(?:\w+\.)?foreign_keys\s*=\s*(?:'?OFF'?|0|'?false'?|'?no'?)\s*$/i;

const describeRef = (r: ForeignKeyRef) => `${r.table}(${r.columns.join(", ")}) ON DELETE ${r.onDelete}`;

/**
 * Checks migrations, in the order they are applied, for a drop, rename or rebuild of a table that other
 * tables reference by foreign key. Pure: the caller reads the files.
 */
export function checkMigrations(migrations: MigrationSource[]): CheckResult {
  const tables = new Map<string, ForeignKeyRef[]>();
  const findings: Finding[] = [];

  const dependentsOf = (table: string) =>
    [...tables.values()].flat().filter((ref) => ref.parent === table && ref.table !== table && tables.has(ref.table));

  for (const migration of migrations) {
    const safe = SAFE_LINE.exec(migration.sql)?.[1] ?? null;
    const statements = splitStatements(migration.sql);
    const foreignKeysOff = statements.some((s) => FOREIGN_KEYS_OFF.test(s));
    // Copies `INSERT INTO new SELECT … FROM old`, and renames `new → old`: together with `DROP old`, a rebuild.
    const copies = new Map<string, string>();
    for (const s of statements) {
      const copy = INSERT_SELECT.exec(s);
      if (copy) copies.set(unquote(copy[2] as string), unquote(copy[1] as string));
    }
    const renamedTo = new Map<string, string>();
    for (const s of statements) {
      const rename = RENAME_TABLE.exec(s);
      if (rename) renamedTo.set(unquote(rename[1] as string), unquote(rename[2] as string));
    }

    const report = (table: string, action: RiskyAction, dependents: ForeignKeyRef[]) => {
      const what =
        action === "rebuild"
          ? `rebuilds table "${table}" (CREATE "${copies.get(table)}", INSERT … SELECT FROM "${table}", DROP "${table}", RENAME back)`
          : action === "drop"
            ? `drops table "${table}"`
            : `renames table "${table}"`;
      const message =
        `${migration.name} ${what} while ${dependents.map(describeRef).join("; ")} reference${dependents.length === 1 ? "s" : ""} it. ` +
        "D1 applies a migration in one transaction with foreign keys enforced" +
        (foreignKeysOff ? " (its PRAGMA foreign_keys=OFF is ignored there)" : "") +
        ": dropping the parent deletes the referencing rows through ON DELETE CASCADE, or fails or nulls them for other actions. " +
        'Change the schema without dropping the parent, or add a line "-- safe: <why>" to the migration.';
      findings.push({ migration: migration.name, table, action, dependents, foreignKeysOff, safe, message });
    };

    for (const s of statements) {
      const create = CREATE_TABLE.exec(s);
      if (create) {
        const table = unquote(create[1] as string);
        const body = parenthesized(create[2] as string);
        const refs = body ? topLevelParts(body).flatMap((d) => foreignKeysOf(table, d)) : [];
        tables.set(table, refs);
        continue;
      }
      const drop = DROP_TABLE.exec(s);
      if (drop) {
        const table = unquote(drop[1] as string);
        const dependents = dependentsOf(table);
        if (dependents.length > 0) {
          const copy = copies.get(table);
          report(table, copy !== undefined && renamedTo.get(copy) === table ? "rebuild" : "drop", dependents);
        }
        tables.delete(table);
        continue;
      }
      const rename = RENAME_TABLE.exec(s);
      if (rename) {
        const from = unquote(rename[1] as string);
        const to = unquote(rename[2] as string);
        const dependents = dependentsOf(from);
        if (dependents.length > 0) report(from, "rename", dependents);
        // SQLite rewrites the references of other tables to the new name.
        for (const refs of tables.values())
          for (const ref of refs) if (ref.parent === from && dependents.includes(ref)) ref.parent = to;
        const own = tables.get(from) ?? [];
        tables.delete(from);
        tables.set(
          to,
          own.map((r) => ({ ...r, table: to })),
        );
        continue;
      }
      const add = ADD_COLUMN.exec(s);
      if (add) {
        const table = unquote(add[1] as string);
        tables.set(table, [...(tables.get(table) ?? []), ...foreignKeysOf(table, add[2] as string)]);
      }
    }
  }
  return { findings, unsafe: findings.filter((f) => f.safe === null), tables };
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

/** The migration files in journal order; files the journal does not list follow in name order. */
export function orderByJournal(
  files: string[],
  journal: Journal | null,
): { ordered: string[]; unlisted: string[]; missing: string[] } {
  const sqlFiles = files.filter((f) => f.endsWith(".sql")).sort();
  if (!journal) return { ordered: sqlFiles, unlisted: sqlFiles, missing: [] };
  const listed = [...journal.entries].sort((a, b) => a.idx - b.idx).map((e) => `${e.tag}.sql`);
  const missing = listed.filter((f) => !sqlFiles.includes(f));
  const unlisted = sqlFiles.filter((f) => !listed.includes(f));
  return { ordered: [...listed.filter((f) => sqlFiles.includes(f)), ...unlisted], unlisted, missing };
}

async function main(): Promise<number> {
  const { existsSync, readdirSync, readFileSync } = await import("node:fs");
  const { join, resolve } = await import("node:path");
  const dir = resolve(process.argv[2] ?? join(import.meta.dirname, "..", "migrations"));
  const journalPath = join(dir, "meta", "_journal.json");
  const journal = existsSync(journalPath) ? (JSON.parse(readFileSync(journalPath, "utf8")) as Journal) : null;
  const { ordered, unlisted, missing } = orderByJournal(readdirSync(dir), journal);
  if (missing.length > 0) {
    console.error(`check-migrations: the journal lists migrations that do not exist: ${missing.join(", ")}`);
    return 1;
  }
  if (journal && unlisted.length > 0) {
    console.log(`check-migrations: not in meta/_journal.json (checked last, in name order): ${unlisted.join(", ")}`);
  }
  const result = checkMigrations(ordered.map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") })));
  for (const f of result.findings) {
    if (f.safe !== null) console.log(`check-migrations: acknowledged: ${f.migration} ${f.action}s "${f.table}": safe: ${f.safe}`);
  }
  if (result.unsafe.length > 0) {
    for (const f of result.unsafe) console.error(`check-migrations: UNSAFE: ${f.message}`);
    console.error(`check-migrations: ${result.unsafe.length} unsafe migration step(s) in ${dir}`);
    return 1;
  }
  console.log(`check-migrations: ${ordered.length} migrations, no unacknowledged drop, rename or rebuild of a referenced table`);
  return 0;
}

if (import.meta.main) process.exitCode = await main();
