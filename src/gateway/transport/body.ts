import type { Context } from "hono";
import { ApiError, CLIENT_ABORT_STATUS } from "../../core/http/errors.ts";
import type { GatewayEnv } from "../env.ts";

/**
 * The buyer's body, read whole, once per request (Hono keeps it: the payment's request fingerprint and the upstream
 * request read the same bytes); a client that goes away mid-upload is logged as such (499), never as our failure.
 */
export async function buyerBody(c: Context<GatewayEnv>): Promise<ArrayBuffer | undefined> {
  if (c.req.method === "GET") return undefined;
  try {
    return await c.req.arrayBuffer();
  } catch (err) {
    if (err instanceof ApiError) throw err; // the body limit's 413
    c.set("errorCode", "CLIENT_ABORTED");
    throw new ApiError("VALIDATION_ERROR", "The request body was not received in full", { status: CLIENT_ABORT_STATUS });
  }
}
