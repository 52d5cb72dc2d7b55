import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

/** `GET /v1/services/{id}/discovery`: a service's discovery document with its diagnostics (docs/discovery.md). */
export const discoveryRouter = createRouter().openapi(routes.getServiceDiscovery, handlers.getServiceDiscovery);
