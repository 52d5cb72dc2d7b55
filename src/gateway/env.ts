import type { HttpEnv } from "../core/http/env.ts";

/** The payment gateway's requests: no API key and no session, only what every request has. */
export type GatewayEnv = HttpEnv;
