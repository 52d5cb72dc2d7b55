import type { Context } from "hono";
import { renderError } from "../../core/http/render.ts";
import type { GatewayEnv } from "../env.ts";
import type { Outcome } from "../pipeline/method.ts";

/**
 * An outcome as an HTTP response: an answer as it is, the method's challenge (noted for the access log, which does
 * not log a challenge), an error or a conflict through the one error renderer, a standard's refusal as its `402`.
 */
export function renderOutcome(c: Context<GatewayEnv>, outcome: Outcome): Response {
  switch (outcome.kind) {
    case "answer":
      if (outcome.errorCode) c.set("errorCode", outcome.errorCode);
      return outcome.response;
    case "challenge":
      c.set("challenge", true);
      return outcome.response;
    case "error":
      if (outcome.errorCode) c.set("errorCode", outcome.errorCode);
      return renderError(outcome.error, c);
    case "refused":
      return outcome.refusal.by === "conflict" ? renderError(outcome.refusal.error, c) : outcome.refusal.answer;
  }
}
