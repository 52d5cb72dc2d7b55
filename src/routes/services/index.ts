import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const servicesRouter = createRouter()
  .openapi(routes.createService, handlers.createService)
  .openapi(routes.listServices, handlers.listServices)
  .openapi(routes.getService, handlers.getService)
  .openapi(routes.updateService, handlers.updateService)
  .openapi(routes.deleteService, handlers.deleteService);
