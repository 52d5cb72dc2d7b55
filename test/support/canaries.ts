// Secret canaries: a registry of values that must never leave the Worker, a collector of everything that did
// (response bodies and headers, console lines), and the scan that compares the two.
//
// What is registered:
// - every raw API key made by `createApiKey` (factories.ts), and its SHA-256 hash;
// - every `canary(label)` a test puts in a secret field (service authConfig values, paywall header values);
// - at scan time, from D1: every stored ciphertext (`services.auth_config`, `paywalls.headers`, the gateway's kept
//   answers `paid_answers.answer`) and every key hash;
// - the `ENCRYPTION_KEY` key material.
// Besides exact values, two shapes are leaks wherever they appear: a whole raw key (`mpk_` + 64 hex) and a whole
// stored ciphertext (`v1.<keyId>.<iv>.<ciphertext>`), so keys and ciphertexts made outside the factories count too.
//
// What is collected: `call()` (factories.ts) feeds every response; `observeResponse` is exported for other
// helpers that call the app directly; test/support/canary-scan.ts (a setup file) feeds console output and runs
// the scan after every test file. A leak is reported by its label, never by its value.
import { env } from "cloudflare:workers";
import { expect } from "vitest";

export type SecretKind = "canary" | "raw API key" | "API key hash" | "ciphertext" | "encryption key";
export type Source = "response body" | "response header" | "console";

export interface Secret {
  kind: SecretKind;
  label: string;
  value: string;
}

export interface Observation {
  source: Source;
  /** What produced it: `GET /v1/me → 200`, `header x-request-id of …`, `console.log`. */
  where: string;
  /** The test running when it was seen. */
  test: string;
  text: string;
}

export interface Leak {
  kind: SecretKind | "raw API key (shape)" | "ciphertext (shape)";
  label: string;
  source: Source;
  where: string;
  test: string;
  /** ±40 characters around the hit, with every known secret and secret shape replaced by its label. */
  excerpt: string;
}

/** Whole raw keys and whole stored ciphertexts: leaks wherever they appear, registered or not. */
const SHAPES: { kind: Leak["kind"]; pattern: RegExp }[] = [
  { kind: "raw API key (shape)", pattern: /mpk_[0-9a-f]{64}/g },
  { kind: "ciphertext (shape)", pattern: /v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}/g },
];

const MIN_SECRET_LENGTH = 12;

const currentTest = () => {
  try {
    return expect.getState().currentTestName ?? "(outside a test)";
  } catch {
    return "(outside a test)";
  }
};

/** A registry and a collector. The suite uses the shared `canaries` instance; a self-test may make its own. */
export class LeakScanner {
  private readonly secrets = new Map<string, Secret>();
  /** The secrets by their first MIN_SECRET_LENGTH characters: a scan costs the text's length, not text × secrets. */
  private readonly byPrefix = new Map<string, Secret[]>();
  private observations: Observation[] = [];
  private readonly seenTexts = new Set<string>();
  private pending: Promise<unknown>[] = [];

  register(kind: SecretKind, label: string, value: string): string {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) {
      throw new Error(`canaries: a ${kind} "${label}" shorter than ${MIN_SECRET_LENGTH} characters cannot be scanned for`);
    }
    if (!this.secrets.has(value)) {
      const secret = { kind, label, value };
      this.secrets.set(value, secret);
      const prefix = value.slice(0, MIN_SECRET_LENGTH);
      const bucket = this.byPrefix.get(prefix);
      if (bucket) bucket.push(secret);
      else this.byPrefix.set(prefix, [secret]);
    }
    return value;
  }

  /** How many secrets are registered, by kind. */
  counts(): Partial<Record<SecretKind, number>> {
    const counts: Partial<Record<SecretKind, number>> = {};
    for (const s of this.secrets.values()) counts[s.kind] = (counts[s.kind] ?? 0) + 1;
    return counts;
  }

  observe(source: Source, where: string, text: string, test = currentTest()): void {
    if (!text) return;
    const dedupe = `${source}\u0000${text}`;
    if (this.seenTexts.has(dedupe)) return;
    this.seenTexts.add(dedupe);
    this.observations.push({ source, where, test, text });
  }

  /** Records the response's headers now and its body once read (from a clone: the caller's response is untouched). */
  observeResponse(res: Response, where: string): void {
    const label = `${where} → ${res.status}`;
    const test = currentTest();
    for (const [name, value] of res.headers) this.observe("response header", `header ${name} of ${label}`, value, test);
    if (res.body === null || res.bodyUsed) return;
    let copy: Response;
    try {
      copy = res.clone();
    } catch {
      return;
    }
    this.pending.push(
      copy.text().then(
        (text) => this.observe("response body", label, text, test),
        () => {},
      ),
    );
  }

  /** Waits for the response bodies still being read. */
  async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      await Promise.all(batch);
    }
  }

  /** How many distinct texts were observed (from one source, if given). */
  observationCount(source?: Source): number {
    return source === undefined ? this.observations.length : this.observations.filter((o) => o.source === source).length;
  }

  /** Every registered secret or secret shape found in what was observed. */
  findLeaks(): Leak[] {
    const leaks: Leak[] = [];
    for (const obs of this.observations) {
      const hits: [number, number][] = [];
      const found = new Set<Secret>(); // each secret once per observation, at its first position
      for (let at = 0; at + MIN_SECRET_LENGTH <= obs.text.length; at++) {
        const bucket = this.byPrefix.get(obs.text.slice(at, at + MIN_SECRET_LENGTH));
        if (!bucket) continue;
        for (const secret of bucket) {
          if (found.has(secret) || !obs.text.startsWith(secret.value, at)) continue;
          found.add(secret);
          hits.push([at, at + secret.value.length]);
          leaks.push(this.leak(secret.kind, secret.label, obs, at, secret.value.length));
        }
      }
      for (const { kind, pattern } of SHAPES) {
        for (const match of obs.text.matchAll(pattern)) {
          const start = match.index ?? 0;
          const end = start + match[0].length;
          if (hits.some(([s, e]) => s < end && start < e)) continue; // already reported by its label
          leaks.push(this.leak(kind, "unregistered", obs, start, match[0].length));
        }
      }
    }
    return leaks;
  }

  /** Forgets what was observed (the registry stays). */
  resetObservations(): void {
    this.observations = [];
    this.seenTexts.clear();
    this.pending = [];
  }

  /** A text with every registered secret and every secret shape replaced by `[kind: label]`. */
  redact(text: string): string {
    let out = text;
    for (const s of [...this.secrets.values()].sort((a, b) => b.value.length - a.value.length)) {
      out = out.split(s.value).join(`[${s.kind}: ${s.label}]`);
    }
    for (const { kind, pattern } of SHAPES) out = out.replace(pattern, `[${kind}]`);
    return out;
  }

  private leak(kind: Leak["kind"], label: string, obs: Observation, at: number, length: number): Leak {
    const excerpt = this.redact(
      `${at > 40 ? "…" : ""}${obs.text.slice(Math.max(0, at - 40), at + length + 40)}${at + length + 40 < obs.text.length ? "…" : ""}`,
    );
    return { kind, label, source: obs.source, where: obs.where, test: obs.test, excerpt };
  }
}

/** A report of leaks that names each by kind and label, never by value. */
export function describeLeaks(file: string, leaks: Leak[]): string {
  const lines = leaks
    .slice(0, 20)
    .map((l) => `  - ${l.kind} "${l.label}" in ${l.source} (${l.where}), test "${l.test}": ${JSON.stringify(l.excerpt)}`);
  const more = leaks.length > 20 ? [`  … and ${leaks.length - 20} more`] : [];
  return [`Secret leak in ${file}: ${leaks.length} hit(s) of secrets in responses or console output`, ...lines, ...more].join(
    "\n",
  );
}

/** The suite's shared registry and collector (one per test file: module state is per file). */
export const canaries = new LeakScanner();

let canaryCounter = 0;

/** A unique, registered canary for a secret field; `label` names it in a leak report (e.g. `authConfig.bearerToken`). */
export function canary(label: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return canaries.register("canary", `${label} #${++canaryCounter}`, `cnry${hex}`);
}

/** Registers a raw API key (only the part after its public 12-character prefix is secret) and its hash. */
export function registerApiKey(label: string, key: string, keyHash: string): void {
  canaries.register("raw API key", label, key.length > 12 ? key.slice(12) : key);
  canaries.register("API key hash", label, keyHash);
}

/** Feeds a response to the collector; `call()` does this for every response. */
export function observeResponse(res: Response, where: string): void {
  canaries.observeResponse(res, where);
}

/** Ciphertext `v1.<keyId>.<iv>.<ct>`: the whole value and its ciphertext segment are both secret. */
function registerCiphertext(scanner: LeakScanner, label: string, value: string): void {
  if (!value.startsWith("v1.")) return;
  scanner.register("ciphertext", label, value);
  const ct = value.split(".")[3];
  if (ct && ct.length >= MIN_SECRET_LENGTH) scanner.register("ciphertext", `${label} (ciphertext segment)`, ct);
}

const parse = (text: unknown): unknown => {
  if (typeof text !== "string") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

async function rows<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  try {
    return (
      (
        await env.DB.prepare(sql)
          .bind(...params)
          .all<T>()
      ).results ?? []
    );
  } catch {
    return []; // a file that drops or replaces tables (migration tests) has nothing to harvest
  }
}

const HARVESTED_TABLES = ["services", "paywalls", "api_keys", "paid_answers"] as const;

/**
 * The rows a test file can have written: those after the last rowid each table had when the file began. Test files
 * that share a runtime (`isolate: false`) share its database, and need not harvest each other's rows.
 */
const fileStart: Record<(typeof HARVESTED_TABLES)[number], number> = {
  services: 0,
  paywalls: 0,
  api_keys: 0,
  paid_answers: 0,
};

/** Called by the setup file before each test file. */
export async function markFileStart(): Promise<void> {
  for (const table of HARVESTED_TABLES) {
    const [row] = await rows<{ last: number | null }>(`SELECT max(rowid) AS last FROM ${table}`);
    fileStart[table] = row?.last ?? 0;
  }
}

/** Registers what D1 and the environment hold that must never leave: ciphertexts, key hashes, key material. */
export async function harvestStoredSecrets(scanner: LeakScanner = canaries): Promise<void> {
  for (const row of await rows<{ id: string; auth_config: string }>(
    "SELECT id, auth_config FROM services WHERE rowid > ? AND auth_config LIKE '%v1.%'",
    fileStart.services,
  )) {
    const config = parse(row.auth_config);
    if (config && typeof config === "object") {
      for (const [field, value] of Object.entries(config)) {
        if (typeof value === "string") registerCiphertext(scanner, `services ${row.id} authConfig.${field}`, value);
      }
    }
  }
  for (const row of await rows<{ id: string; headers: string }>(
    "SELECT id, headers FROM paywalls WHERE rowid > ? AND headers LIKE '%v1.%'",
    fileStart.paywalls,
  )) {
    const headers = parse(row.headers);
    if (Array.isArray(headers)) {
      for (const h of headers as { key?: unknown; value?: unknown }[]) {
        if (typeof h?.value === "string") registerCiphertext(scanner, `paywalls ${row.id} headers.${String(h.key)}`, h.value);
      }
    }
  }
  for (const row of await rows<{ id: string; answer: string }>(
    "SELECT transaction_id AS id, answer FROM paid_answers WHERE rowid > ? AND answer LIKE 'v1.%'",
    fileStart.paid_answers,
  )) {
    registerCiphertext(scanner, `paid_answers ${row.id} answer`, row.answer);
  }
  for (const row of await rows<{ id: string; key_hash: string }>(
    "SELECT id, key_hash FROM api_keys WHERE rowid > ?",
    fileStart.api_keys,
  )) {
    if (typeof row.key_hash === "string") scanner.register("API key hash", `api_keys ${row.id}`, row.key_hash);
  }
  const ring = (env as unknown as { ENCRYPTION_KEY?: unknown }).ENCRYPTION_KEY;
  if (typeof ring === "string") {
    for (const entry of ring.split(",")) {
      const colon = entry.indexOf(":");
      const material = entry.slice(colon + 1).trim();
      if (colon > 0 && material.length >= MIN_SECRET_LENGTH) {
        scanner.register("encryption key", `ENCRYPTION_KEY entry ${entry.slice(0, colon).trim()}`, material);
      }
    }
  }
}
