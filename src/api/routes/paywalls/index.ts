import { idempotent } from "../../middleware/idempotency.ts";
import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const paywallsRouter = createRouter()
  .openapi(routes.createPaywall, idempotent(handlers.createPaywall))
  .openapi(routes.listPaywalls, handlers.listPaywalls)
  .openapi(routes.getPaywall, handlers.getPaywall)
  .openapi(routes.updatePaywall, idempotent(handlers.updatePaywall))
  .openapi(routes.deletePaywall, idempotent(handlers.deletePaywall));
