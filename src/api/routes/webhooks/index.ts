import { idempotent } from "../../middleware/idempotency.ts";
import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const webhooksRouter = createRouter()
  .openapi(routes.createWebhookEndpoint, idempotent(handlers.createWebhookEndpoint))
  .openapi(routes.listWebhookEndpoints, handlers.listWebhookEndpoints)
  .openapi(routes.getWebhookEndpoint, handlers.getWebhookEndpoint)
  .openapi(routes.updateWebhookEndpoint, idempotent(handlers.updateWebhookEndpoint))
  .openapi(routes.deleteWebhookEndpoint, idempotent(handlers.deleteWebhookEndpoint))
  .openapi(routes.rollWebhookSecret, idempotent(handlers.rollWebhookSecret))
  .openapi(routes.sendTestWebhook, idempotent(handlers.sendTestWebhook))
  .openapi(routes.listWebhookDeliveries, handlers.listWebhookDeliveries)
  .openapi(routes.retryWebhookDelivery, idempotent(handlers.retryWebhookDelivery));
