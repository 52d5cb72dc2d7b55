/**
 * Miniflare's `outboundService` for the gateway tests: the Worker's outbound `fetch` to a few public-looking
 * `*.gateway.test` hosts reaches the local processes, so the Worker's SSRF rules stay exactly as deployed (they refuse
 * loopback; `.test` names pass them). `https://upstream.gateway.test/a?b` → `http://127.0.0.1:<upstream port>/a?b`.
 * Requests to the local processes' own origins pass through unchanged (test code reading recorded requests or chain
 * state). Anything else is answered `502` with `x-localnet-unrouted: 1`: no test ever reaches the internet.
 *
 * Method, headers and body go along; redirects are returned, never followed; an abort by the Worker aborts the
 * forwarded request.
 *
 * Lost answers, for settlements whose outcome is unknown: a routed host prefixed with a fault reaches the same
 * process, except for the requests that move money (a facilitator's `POST …/settle`, a JSON-RPC
 * `eth_sendRawTransaction` / `eth_sendRawTransactionSync`):
 * - `answer-lost.<host>` forwards them, waits for the answer and drops it: `504` with a body that is not JSON (what
 *   a proxy answers when its upstream timed out). The money moved; the caller cannot know.
 * - `send-dropped.<host>` does not forward them: the same `504`. Nothing moved; the caller cannot know either.
 * - `send-refused.<host>` does not forward them and answers a JSON-RPC error, as a node refusing the transaction
 *   does (`nonce too low`). Nothing moved, and the caller knows it.
 *
 * A capped RPC: `logs-capped.<host>` answers an `eth_getLogs` spanning more than `LOGS_CAP_BLOCKS` blocks with the
 * JSON-RPC error such RPCs give (many public RPCs cap the range, some at 50 blocks), and forwards everything else.
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

const FAULT = /^(answer-lost|send-dropped|send-refused|logs-capped)\.(.+)$/;
export const LOGS_CAP_BLOCKS = 100;

/** Whether the request is an `eth_getLogs` over more blocks than a capped RPC answers for. */
function overLogsCap(body: ArrayBuffer | undefined): boolean {
  if (!body) return false;
  try {
    const calls = [JSON.parse(new TextDecoder().decode(body))].flat() as { method?: string; params?: unknown[] }[];
    return calls.some((call) => {
      if (call.method !== "eth_getLogs") return false;
      const { fromBlock, toBlock } = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
      if (!fromBlock?.startsWith("0x") || !toBlock?.startsWith("0x")) return true;
      return BigInt(toBlock) - BigInt(fromBlock) + 1n > BigInt(LOGS_CAP_BLOCKS);
    });
  } catch {
    return false;
  }
}

/** Whether the request moves money: a facilitator settlement, or a raw transaction sent over JSON-RPC. */
function movesMoney(path: string, body: ArrayBuffer | undefined): boolean {
  if (path.endsWith("/settle")) return true;
  if (!body) return false;
  try {
    const calls = [JSON.parse(new TextDecoder().decode(body))].flat() as { method?: string }[];
    return calls.some((call) => call.method?.startsWith("eth_sendRawTransaction"));
  } catch {
    return false;
  }
}

const lostAnswer = () =>
  new MiniflareResponse("<html>504 Gateway Time-out</html>", {
    status: 504,
    headers: { "content-type": "text/html", "x-localnet-fault": "1" },
  }) as unknown as Response;

/** A node's JSON-RPC refusal of a sent transaction. */
function refusedSend(body: ArrayBuffer | undefined): Response {
  const call = JSON.parse(new TextDecoder().decode(body)) as { id?: number } | { id?: number }[];
  const refusal = (id: number | undefined) => ({ jsonrpc: "2.0", id, error: { code: -32003, message: "nonce too low" } });
  return new MiniflareResponse(JSON.stringify(Array.isArray(call) ? call.map((c) => refusal(c.id)) : refusal(call.id)), {
    status: 200,
    headers: { "content-type": "application/json", "x-localnet-fault": "1" },
  }) as unknown as Response;
}

export function createOutboundRouter(routes: OutboundRoutes, options: { passThrough?: boolean } = {}) {
  const localOrigins = new Set(Object.values(routes).map((u) => new URL(u).origin));
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const fault = FAULT.exec(url.hostname);
    if (fault && routes[fault[2] as string] !== undefined) {
      const body = request.method === "POST" ? await request.arrayBuffer() : undefined;
      const routed = new URL(url);
      routed.hostname = fault[2] as string;
      const forward = () => route(new Request(routed, { method: request.method, headers: request.headers, body }));
      if (fault[1] === "logs-capped") {
        if (!overLogsCap(body)) return forward();
        const id = (JSON.parse(new TextDecoder().decode(body)) as { id?: unknown }).id ?? null;
        const error = { code: -32600, message: `eth_getLogs is limited to a ${LOGS_CAP_BLOCKS} block range` };
        return new MiniflareResponse(JSON.stringify({ jsonrpc: "2.0", id, error }), {
          headers: { "content-type": "application/json", "x-localnet-fault": "1" },
        }) as unknown as Response;
      }
      if (!movesMoney(url.pathname, body)) return forward();
      if (fault[1] === "send-refused") return refusedSend(body);
      if (fault[1] === "answer-lost") await (await forward()).arrayBuffer();
      return lostAnswer();
    }
    return route(request);
  };

  async function route(request: Request): Promise<Response> {
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
  }
}
