import { DurableObject } from "cloudflare:workers";
import { findKeyWithTenantByHash, touchKeyLastUsed } from "../../db/api-keys.ts";
import { getDb } from "../../db/client.ts";
import {
  type AuthorizeAnswer,
  type AuthorizeRequest,
  type KeyRecord,
  keyRecordOf,
  LAST_USED_INTERVAL_MS,
  lastUseDue,
  type RateLimitDecision,
  RECORD_MAX_AGE_MS,
  refusalOf,
} from "../keys/record.ts";

interface Window {
  start: number;
  count: number;
}

/** The record as read for `keyHash` (`null`: no key has that hash), and when. */
interface Held {
  keyHash: string;
  record: KeyRecord | null;
  readAt: number;
}

/**
 * One object per rate-limit bucket: per API key (named `key:<SHA-256 of the key>`, keys/key-object.ts) and per client
 * address (`ip:…`, `refused-payments:ip:…`).
 *
 * The window: an exact fixed-window counter that starts at its first request. Counting never awaits between reading
 * and writing the count, so concurrent requests cannot both take the last slot; the count is written to the object's
 * SQLite storage so an evicted object resumes it.
 *
 * A key's object also authenticates its requests (`authorize`): it holds the key's record (its row and its tenant's)
 * in memory, read from D1 once, and judges each request against it, then counts it: one call, no D1 on the request's
 * path. The record is kept exact by `forget`, which every path that changes a key or its tenant calls after its D1
 * write commits: the object drops its record, and the next request reads D1 again. The record lives in memory only,
 * so an object that was evicted or restarted (a dev server stopped while the operator CLI changed a key) starts from
 * D1. A read that began before a `forget` is never kept (the generation check), so no request judged after `forget`
 * returned can see the state from before it.
 */
export class RateLimiter extends DurableObject<Env> {
  private window: Window | undefined;
  private held: Held | undefined;
  private reading: Promise<Held> | undefined;
  /** Bumped by `forget`: a read that started in an earlier generation is not kept. */
  private generation = 0;

  hit(limit: number, windowMs: number): RateLimitDecision {
    const now = Date.now();
    let w = this.window ?? this.ctx.storage.kv.get<Window>("window");
    if (!w || now >= w.start + windowMs) w = { start: now, count: 0 };
    const resetAt = w.start + windowMs;
    if (w.count >= limit) {
      this.window = w;
      return { allowed: false, limit, remaining: 0, resetAt };
    }
    w = { start: w.start, count: w.count + 1 };
    this.window = w;
    this.ctx.storage.kv.put("window", w);
    return { allowed: true, limit, remaining: limit - w.count, resetAt };
  }

  /** Authenticates a request made with the key this object is named after, then counts it against the key's limit. */
  async authorize(request: AuthorizeRequest): Promise<AuthorizeAnswer> {
    let d1Statements = 0;
    let held = this.fresh(request.keyHash);
    while (!held) {
      const generation = this.generation;
      d1Statements = 1;
      this.reading ??= this.read(request.keyHash, generation);
      const read = await this.reading;
      // Forgotten while reading: what was read may predate the change that was forgotten, so it is not used.
      held = generation === this.generation ? read : this.fresh(request.keyHash);
    }
    const record = held.record;
    if (!record) return { kind: "unknown", d1Statements };
    const now = Date.now();
    const refusal = refusalOf(record, now, request.clientIp);
    if (refusal) return { kind: "refused", reason: refusal, d1Statements };
    const decision = this.hit(request.limit, request.windowMs);
    if (decision.allowed && lastUseDue(record, now)) {
      record.lastUsedAt = now;
      d1Statements++;
      this.ctx.waitUntil(
        touchKeyLastUsed(getDb(this.env.DB), record.keyId, new Date(now), LAST_USED_INTERVAL_MS).catch(() => {}),
      );
    }
    const { keyId, keyName, keyPrefix, scopes, tenant } = record;
    return { kind: "admitted", key: { keyId, keyName, keyPrefix, scopes, tenant }, decision, d1Statements };
  }

  /** Drops the record: the next request reads the key from D1. Called after every change to the key or its tenant. */
  forget(): void {
    this.generation++;
    this.held = undefined;
    this.reading = undefined;
  }

  /**
   * `POST /forget`: `forget` for callers that reach the object by `fetch` only, i.e. the operator CLI through wrangler's
   * dev registry (cli/platform.ts). Answers `{"admitted": n}`, the requests admitted in the current window before the
   * record was dropped (what a race test compares with the answers it got). Objects are reachable through their
   * namespace binding alone, never from the internet.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST" || new URL(request.url).pathname !== "/forget") return new Response(null, { status: 404 });
    this.forget();
    const window = this.window ?? this.ctx.storage.kv.get<Window>("window");
    return Response.json({ admitted: window?.count ?? 0 });
  }

  /** The record held for `keyHash`, if it is not older than `RECORD_MAX_AGE_MS`. */
  private fresh(keyHash: string): Held | undefined {
    const held = this.held;
    return held && held.keyHash === keyHash && Date.now() - held.readAt < RECORD_MAX_AGE_MS ? held : undefined;
  }

  /**
   * One read of the key and its tenant, shared by the requests that wait for it. A plain D1 binding reads the primary
   * database (no session), so the read sees every write committed before it: the change `forget` announced included.
   */
  private async read(keyHash: string, generation: number): Promise<Held> {
    try {
      const found = await findKeyWithTenantByHash(getDb(this.env.DB), keyHash);
      const held = { keyHash, record: found ? keyRecordOf(found.key, found.tenant) : null, readAt: Date.now() };
      if (generation === this.generation) this.held = held;
      return held;
    } finally {
      if (generation === this.generation) this.reading = undefined;
    }
  }
}
