/**
 * Miniflare's `outboundService` for the gateway tests: the Worker's outbound `fetch` to a few public-looking
 * `*.gateway.test` hosts reaches the local processes, so the Worker's SSRF rules stay exactly as deployed (they refuse
 * loopback; `.test` names pass them). `https://upstream.gateway.test/a?b` → `http://127.0.0.1:<upstream port>/a?b`.
 * Requests to the local processes' own origins pass through unchanged (test code reading recorded requests or chain
 * state). Anything else is answered `502` with `x-localnet-unrouted: 1`: no test ever reaches the internet.
 *
 * Method, headers and body go along; redirects are returned, never followed; an abort by the Worker aborts the
 * forwarded request.
 */
import { Response as MiniflareResponse, fetch as miniflareFetch } from "miniflare";

export const GATEWAY_TEST_HOSTS = {
  upstream: "upstream.gateway.test",
  facilitator: "facilitator.gateway.test",
  rpc: "rpc.gateway.test",
  tempoRpc: "tempo-rpc.gateway.test",
} as const;

/** host name → local origin (`http://127.0.0.1:<port>`). */
export type OutboundRoutes = Record<string, string>;

export function createOutboundRouter(routes: OutboundRoutes, options: { passThrough?: boolean } = {}) {
  const localOrigins = new Set(Object.values(routes).map((u) => new URL(u).origin));
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const target = routes[url.hostname];
    let forwardTo: string;
    if (target !== undefined) {
      const local = new URL(target);
      forwardTo = `${local.origin}${url.pathname}${url.search}`;
    } else if (localOrigins.has(url.origin) || options.passThrough) {
      forwardTo = url.toString();
    } else {
      return new MiniflareResponse(`Outbound fetch to ${url.origin} is not routed in tests.`, {
        status: 502,
        headers: { "x-localnet-unrouted": "1", "content-type": "text/plain" },
      }) as unknown as Response;
    }
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    return (await miniflareFetch(forwardTo, {
      method: request.method,
      headers: request.headers as never,
      body: hasBody ? ((await request.arrayBuffer()) as never) : undefined,
      redirect: "manual",
      signal: request.signal as never,
    })) as unknown as Response;
  };
}
