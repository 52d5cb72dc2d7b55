import { createRouter } from "../../router.ts";
import * as handlers from "./handlers.ts";
import * as routes from "./routes.ts";

export const transactionsRouter = createRouter()
  .openapi(routes.listTransactions, handlers.listTransactions)
  .openapi(routes.getTransaction, handlers.getTransaction);
