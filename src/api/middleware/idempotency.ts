// Idempotency keys of writes under /v1, in one place: the header's contract, the claim taken before a write
// handler runs, the replay of a stored answer, and the recorder a handler puts into its own write batch.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, type ErrorCode, invalid } from "../../core/http/errors.ts";
import type { Db } from "../../db/client.ts";
import { isDatabaseFailure } from "../../db/errors.ts";
import {
  type ClaimedRow,
  type ClaimRef,
  claimIdempotencyKey,
  findIdempotencyRecord,
  type RequestFingerprint,
  type ResponseRecorder,
  releaseIdempotencyKey,
  responseRecorder,
} from "../../db/idempotency.ts";
import type { IdempotencyRecord } from "../../db/schema.ts";
import { bodyHash, IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE, PRINTABLE_ASCII } from "../../lib/idempotency-key.ts";
import { randomHex } from "../../lib/ids.ts";
import type { AuthVariables } from "./auth.ts";
import type { DatabaseVariables } from "./database.ts";

/** How long a key's record is kept (and replayed): 24 hours from its first request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a claim blocks its key: a request that crashed frees its key for a retry after this. */
export const IDEMPOTENCY_LEASE_MS = 60_000;

/** The claim of the request being handled, when it carries a key. */
export interface IdempotencyClaim extends ClaimRef {
  /** Set once the handler has asked for its recorder: its write batch stores the answer. */
  recorded: boolean;
  /** The claim as stored, once taken. */
  row?: ClaimedRow;
}
export type IdempotencyVariables = { idempotency?: IdempotencyClaim };

/** What a write handler's context holds here: the database, the authenticated key, and its claim. */
type IdempotentEnv = { Bindings: Env; Variables: DatabaseVariables & AuthVariables & IdempotencyVariables };

/** The methods whose body is read (and so fingerprinted); a DELETE's body is ignored, and hashes as empty. */
const BODY_METHODS = new Set(["POST", "PATCH", "PUT"]);

const HEADER = "Idempotency-Key";

// ---- the contract (OpenAPI) ----

/** The optional `Idempotency-Key` request header of every write. */
export const IDEMPOTENCY_HEADER = {
  "idempotency-key": z
    .string()
    .min(1, IDEMPOTENCY_KEY_RULE)
    .max(255, IDEMPOTENCY_KEY_RULE)
    .regex(PRINTABLE_ASCII, IDEMPOTENCY_KEY_RULE)
    .optional()
    .openapi({
      description:
        "Makes a retry safe: the first request with this key (1-255 printable ASCII characters, chosen by the client, e.g. a UUID) is processed and its answer stored for 24 hours, for the tenant; the same request again with the key gets that answer replayed (`Idempotent-Replayed: true`) and writes nothing. The key with another method, path or body is `422 IDEMPOTENCY_KEY_REUSED`; while the first is still running, `409 IDEMPOTENCY_IN_PROGRESS` with `Retry-After`. Refusals are not stored: a corrected retry may reuse the key.",
      example: "3f1c9a52-6d0e-4b8e-9a57-0c2f7b1e4d21",
    }),
};
export const IdempotencyHeadersSchema = z.object(IDEMPOTENCY_HEADER);

/** The codes a write with a key may answer besides its own: before its handler runs, or (`CONFLICT`) when it lost its key to a retry. */
export const IDEMPOTENCY_ERRORS = [
  "IDEMPOTENCY_KEY_REUSED",
  "IDEMPOTENCY_IN_PROGRESS",
  "CONFLICT",
] as const satisfies ErrorCode[];

/** Declared on a write's success response: present (`true`) on a replay. */
export const REPLAYED_HEADERS = { "Idempotent-Replayed": { $ref: "#/components/headers/Idempotent-Replayed" } };

// ---- the runtime ----

/**
 * Wraps a write handler. Without an `Idempotency-Key` the handler runs as is. With one, after authentication, the
 * rate limit, the scope and the route's validation (the handler's place in the chain), the request either claims
 * the tenant's key and runs, or answers from the key's record: the stored answer replayed, `422` for another
 * request, `409` while the first still runs. A claim whose handler refuses (any error) or never records its answer
 * is released, so nothing is stored and a corrected retry can use the key.
 */
export function idempotent<H extends (c: never, next: () => Promise<void>) => unknown>(route: H): H {
  // Every write handler's context holds at least `IdempotentEnv` (the API's `ApiEnv`).
  const handler = route as unknown as (c: Context<IdempotentEnv>, next: () => Promise<void>) => unknown;
  const wrapped = async (c: Context<IdempotentEnv>, next: () => Promise<void>) => {
    const key = c.req.header(HEADER);
    if (key === undefined) return handler(c, next);
    if (!IDEMPOTENCY_KEY.test(key)) throw invalid([{ path: HEADER, message: IDEMPOTENCY_KEY_RULE }]);

    const db = c.var.db;
    const claim: IdempotencyClaim = { tenantId: c.var.auth.tenant.id, key, token: randomHex(16), recorded: false };
    const fingerprint: RequestFingerprint = {
      method: c.req.method,
      path: c.req.path,
      // A write without a body (a POST that triggers an action) hashes as no body.
      bodyHash: await bodyHash(BODY_METHODS.has(c.req.method) && (await c.req.text()) !== "" ? await c.req.json() : undefined),
    };
    // A record released or expired between the claim and the read is claimed again.
    for (let attempt = 0; ; attempt++) {
      const now = new Date();
      const row: ClaimedRow = {
        tenantId: claim.tenantId,
        key,
        token: claim.token,
        ...fingerprint,
        now,
        leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      };
      if (await claimIdempotencyKey(db, row)) {
        claim.row = row;
        break;
      }
      const record = await findIdempotencyRecord(db, claim.tenantId, key, now);
      if (record) return answerFromRecord(c, record, fingerprint, now);
      if (attempt >= 2) throw inProgress(1);
    }

    c.set("idempotency", claim);
    let res: Response;
    try {
      res = (await handler(c, next)) as Response;
    } catch (err) {
      // Asked before the release, which would otherwise make our own claim look lost.
      const lost = isDatabaseFailure(err) && (await lostClaim(db, claim));
      await releaseIdempotencyKey(db, claim).catch(() => {});
      if (lost) throw takenOver();
      throw err;
    }
    if (res.status >= 400 || !claim.recorded) await releaseIdempotencyKey(db, claim).catch(() => {});
    return res;
  };
  return wrapped as unknown as H;
}

/**
 * Whether a retry took the key over (after the lease) while this request ran, and holds it or gave it back: its
 * write batch was then refused by the claim's guard.
 */
async function lostClaim(db: Db, claim: IdempotencyClaim): Promise<boolean> {
  try {
    const record = await findIdempotencyRecord(db, claim.tenantId, claim.key, new Date());
    return record === undefined || record.claimToken !== claim.token;
  } catch {
    return false;
  }
}

const takenOver = () =>
  new ApiError(
    "CONFLICT",
    `This request ran past its Idempotency-Key's ${IDEMPOTENCY_LEASE_MS / 1000} s lease and a retry took the key over; this request wrote nothing. Send it again with the key to get the retry's answer`,
  );

const inProgress = (seconds: number) =>
  new ApiError(
    "IDEMPOTENCY_IN_PROGRESS",
    "A request with this Idempotency-Key is still in progress; retry after Retry-After seconds",
    {
      headers: { "Retry-After": String(seconds) },
    },
  );

function answerFromRecord(
  c: Context<IdempotentEnv>,
  record: IdempotencyRecord,
  request: RequestFingerprint,
  now: Date,
): Response {
  const differs = [
    record.method !== request.method && "method",
    record.path !== request.path && "path",
    record.bodyHash !== request.bodyHash && "body",
  ].filter(Boolean);
  if (differs.length > 0) {
    throw new ApiError(
      "IDEMPOTENCY_KEY_REUSED",
      `This Idempotency-Key was first used for another request (${record.method} ${record.path}; the ${differs.join(", ")} differ${differs.length > 1 ? "" : "s"}): send a new key with a new request`,
    );
  }
  if (record.state !== "done" || record.responseStatus === null || record.responseBody === null) {
    throw inProgress(Math.max(1, Math.ceil((record.leaseUntil.getTime() - now.getTime()) / 1000)));
  }
  return c.body(record.responseBody, record.responseStatus as ContentfulStatusCode, {
    ...record.responseHeaders,
    "Content-Type": "application/json",
    "Idempotent-Replayed": "true",
  });
}

/**
 * The statement that stores this answer with the handler's write, for its own `db.batch` (see `ResponseRecorder`);
 * `undefined` when the request carries no key. `body` must be the very object the handler then sends with `c.json`.
 */
export function recordResponse<E extends IdempotentEnv>(
  c: Context<E>,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): ResponseRecorder | undefined {
  const claim = c.var.idempotency;
  if (!claim) return undefined;
  claim.recorded = true;
  return responseRecorder(c.var.db, claim.row as ClaimedRow, { status, body: JSON.stringify(body), headers });
}
