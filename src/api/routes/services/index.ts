import { idempotent } from "../../middleware/idempotency.ts";
import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const servicesRouter = createRouter()
  .openapi(routes.createService, idempotent(handlers.createService))
  .openapi(routes.listServices, handlers.listServices)
  .openapi(routes.getService, handlers.getService)
  .openapi(routes.updateService, idempotent(handlers.updateService))
  .openapi(routes.deleteService, idempotent(handlers.deleteService));
