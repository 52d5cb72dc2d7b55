import type { AccessLogVariables } from "./access-log.ts";
import type { RequestIdVariables } from "./request-id.ts";

/** What every request has, whichever app answers it: the Worker's bindings, its request id, and what its log line names. */
export interface HttpEnv {
  Bindings: Env;
  Variables: RequestIdVariables & AccessLogVariables;
}
