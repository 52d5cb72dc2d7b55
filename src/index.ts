import { createApp } from "./app.ts";

export { Ingest } from "./ingest/entrypoint.ts";
export { RateLimiter } from "./rate-limit/durable-object.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
