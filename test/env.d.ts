import type { D1Migration } from "cloudflare:test";
import type { RacyRateLimiter } from "./support/worker.ts";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      RACY_RATE_LIMITER: DurableObjectNamespace<RacyRateLimiter>;
    }
  }
}
