import type { Config } from "../../core/config.ts";
import { checkUpstreamUrl } from "../../lib/ssrf.ts";
import type { UpstreamParts } from "./request.ts";

export type UpstreamOutcome =
  | { kind: "answered"; status: number; headers: Headers; body: ArrayBuffer; ms: number }
  | { kind: "timeout"; ms: number }
  | { kind: "unreachable"; ms: number };

/**
 * Calls the upstream once: redirects are returned, not followed; the paywall's timeout bounds the whole
 * exchange, body included (the body is read before anything is settled, so a stalled body is a timeout, not
 * a charge). Errors carry no URL, header or credential.
 */
export async function callUpstream(method: string, parts: UpstreamParts, timeoutMs: number): Promise<UpstreamOutcome> {
  const started = Date.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(parts.url, {
      method,
      headers: parts.headers,
      body: method === "GET" ? undefined : parts.body,
      redirect: "manual",
      signal,
    });
    const body = await response.arrayBuffer();
    return { kind: "answered", status: response.status, headers: response.headers, body, ms: Date.now() - started };
  } catch {
    return signal.aborted ? { kind: "timeout", ms: Date.now() - started } : { kind: "unreachable", ms: Date.now() - started };
  }
}

/** The SSRF rule at call time: the final URL (after query and credentials) must still be allowed. */
export const upstreamAllowed = (url: URL, config: Pick<Config, "upstreamsAllowLoopback">) =>
  checkUpstreamUrl(url.href, { allowLoopback: config.upstreamsAllowLoopback }).allowed;
