import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const eventsRouter = createRouter()
  .openapi(routes.listEvents, handlers.listEvents)
  .openapi(routes.getEvent, handlers.getEvent);
