import { createApp } from "./app.ts";

export { RateLimiter } from "./rate-limiter.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
