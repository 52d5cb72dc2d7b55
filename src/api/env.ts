import type { AccessLogVariables } from "../core/http/access-log.ts";
import type { RequestIdVariables } from "../core/http/request-id.ts";
import type { AuthVariables } from "./middleware/auth.ts";
import type { DatabaseVariables } from "./middleware/database.ts";
import type { IdempotencyVariables } from "./middleware/idempotency.ts";

/**
 * What every request has: the app-wide middleware and the error renderer see this. A key may or may not have been
 * authenticated yet, so `auth` and `rateLimit` are optional here.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: RequestIdVariables & AccessLogVariables & Partial<AuthVariables>;
}

/** A public `/v1` route (health): no key, but the database. */
export interface PublicEnv {
  Bindings: Env;
  Variables: RequestIdVariables & AccessLogVariables & DatabaseVariables;
}

/** An authenticated `/v1` route: the key, its tenant and its rate-limit decision are there (and a write's idempotency claim). */
export interface ApiEnv {
  Bindings: Env;
  Variables: RequestIdVariables & AccessLogVariables & DatabaseVariables & AuthVariables & IdempotencyVariables;
}
