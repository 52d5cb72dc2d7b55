import type { Db } from "../db/client.ts";
import type { Tenant } from "../db/schema.ts";

/** `open`: a wallet that belongs to no tenant may sign up; `closed`: it is refused. */
export type SignupPolicy = "open" | "closed";

/** What the dashboard can be given instead of the real clock and the Worker's vars (tests inject the sign-up policy). */
export interface DashboardOptions {
  now?: () => Date;
  signup?: SignupPolicy;
}

/** The signed-in session, set by `requireSession`. */
export interface DashboardSession {
  /** SHA-256 of the cookie's id: the row's primary key. Never shown. */
  idHash: string;
  tenant: Tenant;
}

export interface DashboardEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Db;
    errorCode: string;
    /** The request's clock (injected in tests). */
    now: Date;
    /** The per-response nonce that `script-src`/`style-src` allow for inline elements. */
    cspNonce: string;
    signup: SignupPolicy;
    session: DashboardSession;
  };
}
