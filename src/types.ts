import type { Db } from "./db/client.ts";
import type { Tenant } from "./db/schema.ts";
import type { RateLimitDecision } from "./rate-limiter.ts";

export interface AuthContext {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  scopes: string[];
  tenant: Tenant;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Db;
    auth: AuthContext;
    rateLimit: RateLimitDecision;
    /** Set by the error renderer so the request's log line names the failure. */
    errorCode: string;
  };
}
