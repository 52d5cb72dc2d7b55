import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const paywallsRouter = createRouter()
  .openapi(routes.createPaywall, handlers.createPaywall)
  .openapi(routes.listPaywalls, handlers.listPaywalls)
  .openapi(routes.getPaywall, handlers.getPaywall)
  .openapi(routes.updatePaywall, handlers.updatePaywall)
  .openapi(routes.deletePaywall, handlers.deletePaywall);
