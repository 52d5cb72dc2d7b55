import { createApp } from "./app.ts";
import { getDb } from "./db/client.ts";
import { deleteExpiredIdempotencyKeys } from "./db/idempotency.ts";

export { Ingest } from "./ingest/entrypoint.ts";
export { RateLimiter } from "./rate-limit/durable-object.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** The Cron Trigger of wrangler.toml (hourly): deletes idempotency records past their 24 hours. */
  async scheduled(controller, env) {
    const deleted = await deleteExpiredIdempotencyKeys(getDb(env.DB), new Date(controller.scheduledTime));
    console.log(JSON.stringify({ cron: controller.cron, task: "idempotency-cleanup", deleted }));
  },
} satisfies ExportedHandler<Env>;
