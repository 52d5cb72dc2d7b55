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
 * A connection that fails (nothing listens, the name does not resolve, TLS fails) is a failed `fetch` in the Worker,
 * as on the platform, never an answer: the router throws `Unreachable`, and `outboundService(router)` (what Miniflare is
 * given) closes the Worker's connection unanswered, so its `fetch` rejects ("Network connection lost"). Miniflare turns
 * a function that throws into a `500` page with a stack, which the Worker would take for an upstream's answer.
 * Miniflare hands such a Node handler the request without its scheme: a local origin is `http:`, a routed host goes to
 * its local origin, and anything else (pass-through) is tried over `https:`, then `http:` when nothing answers TLS there.
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
 * A facilitator that is down, failing, slow or broken, for every request (verify and settle alike):
 * - `down.<host>`: nothing answers (the Worker's `fetch` fails, as for a connection refused); nothing is forwarded.
 * - `error-status.<host>`: `503` with a page that is not JSON; nothing is forwarded.
 * - `garbage.<host>`: `200` with a body that is not JSON; nothing is forwarded.
 * - `wrong-shape.<host>`: `200` with JSON that is neither a verify nor a settle answer; nothing is forwarded.
 * - `slow.<host>`: forwarded after `SLOW_MS` (or not at all when the Worker gives up first).
 * - `ok.<host>`: forwarded as it is (a name of its own for a healthy facilitator).
 * Any fault may carry a tag of the test's own (`t1-down.<host>`): another URL, so its health is the test's own.
 *
 * A capped RPC: `logs-capped.<host>` answers an `eth_getLogs` spanning more than `LOGS_CAP_BLOCKS` blocks with the
 * JSON-RPC error such RPCs give (many public RPCs cap the range, some at 50 blocks), and forwards everything else.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { Response as MiniflareResponse, fetch as miniflareFetch } from "miniflare";

export const GATEWAY_TEST_HOSTS = {
  upstream: "upstream.gateway.test",
  facilitator: "facilitator.gateway.test",
  /** The second local facilitator (failover between facilitators). */
  secondFacilitator: "facilitator-b.gateway.test",
  rpc: "rpc.gateway.test",
  tempoRpc: "tempo-rpc.gateway.test",
  /** Routed to a local port where nothing listens: the Worker's fetch fails, as for an upstream that is down. */
  unreachable: "unreachable.gateway.test",
} as const;

/** host name → local origin (`http://127.0.0.1:<port>`). */
export type OutboundRoutes = Record<string, string>;

const FAULT =
  /^(?:[a-z0-9]+-(?=[a-z]))?(answer-lost|send-dropped|send-refused|logs-capped|down|error-status|garbage|wrong-shape|slow|ok)\.(.+)$/;
export const LOGS_CAP_BLOCKS = 100;
/** How long `slow.<host>` holds a request before forwarding it. */
export const SLOW_MS = 4_000;

const faultAnswer = (status: number, body: string, type: string) =>
  new MiniflareResponse(body, { status, headers: { "content-type": type, "x-localnet-fault": "1" } }) as unknown as Response;

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

/** A connection to the target failed: nothing answered, so the Worker's `fetch` must fail too. */
export class Unreachable extends Error {}

/** Errors of a connection that never carried the request: refused, unresolvable, or no TLS spoken there. */
const NOT_CONNECTED = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPROTO|ERR_SSL_|UND_ERR_SOCKET)/;
function connectionCode(err: unknown): string {
  type Coded = { code?: string; cause?: Coded; errors?: Coded[] };
  const cause = (err as Coded).cause ?? (err as Coded);
  return String(cause.code ?? cause.errors?.[0]?.code ?? "");
}

export type OutboundRouter = (request: Request) => Promise<Response>;

export function createOutboundRouter(routes: OutboundRoutes, options: { passThrough?: boolean } = {}): OutboundRouter {
  const localOrigins = new Set(Object.values(routes).map((u) => new URL(u).origin));
  const localHosts = new Set(Object.values(routes).map((u) => new URL(u).host));
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const fault = FAULT.exec(url.hostname);
    if (fault && routes[fault[2] as string] !== undefined) {
      const body = request.method === "POST" ? await request.arrayBuffer() : undefined;
      const routed = new URL(url);
      routed.hostname = fault[2] as string;
      const forward = () => route(new Request(routed, { method: request.method, headers: request.headers, body }));
      switch (fault[1]) {
        case "ok":
          return forward();
        case "down":
          throw new Unreachable(`${url.host}: down`);
        case "error-status":
          return faultAnswer(503, "<html>503 Service Unavailable</html>", "text/html");
        case "garbage":
          return faultAnswer(200, "<html>this is not JSON</html>", "application/json");
        case "wrong-shape":
          return faultAnswer(200, JSON.stringify({ ok: true, data: "not an x402 answer" }), "application/json");
        case "slow":
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, SLOW_MS);
            request.signal?.addEventListener("abort", () => {
              clearTimeout(timer);
              resolve();
            });
          });
          if (request.signal?.aborted) throw new Unreachable(`${url.host}: the caller gave up`);
          return forward();
      }
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
    let tries: string[];
    if (target !== undefined) {
      const local = new URL(target);
      tries = [`${local.origin}${url.pathname}${url.search}`];
    } else if (localHosts.has(url.host)) {
      tries = [`http://${url.host}${url.pathname}${url.search}`];
    } else if (localOrigins.has(url.origin)) {
      tries = [url.toString()];
    } else if (options.passThrough) {
      // The scheme may have been lost on the way here (see `outboundService`): https first, then plain http.
      tries = url.protocol === "https:" ? [url.toString(), `http://${url.host}${url.pathname}${url.search}`] : [url.toString()];
    } else {
      return new MiniflareResponse(`Outbound fetch to ${url.origin} is not routed in tests.`, {
        status: 502,
        headers: { "x-localnet-unrouted": "1", "content-type": "text/plain" },
      }) as unknown as Response;
    }
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    const body = hasBody ? await request.arrayBuffer() : undefined;
    let failure: unknown;
    for (const forwardTo of tries) {
      try {
        return (await miniflareFetch(forwardTo, {
          method: request.method,
          headers: request.headers as never,
          body: body as never,
          redirect: "manual",
          signal: request.signal as never,
        })) as unknown as Response;
      } catch (err) {
        if (request.signal?.aborted || !NOT_CONNECTED.test(connectionCode(err))) throw err;
        failure = err;
      }
    }
    throw new Unreachable(`${url.host}: ${connectionCode(failure)}`);
  }
}

/**
 * The router as Miniflare's `outboundService` (`{ node }`: a Node handler, which can close the Worker's connection):
 * the router's answer is written back as it is; `Unreachable` closes the connection unanswered, so the Worker's `fetch`
 * rejects as it does on the platform when nothing answers. The Worker going away aborts the routed request.
 */
export function outboundService(router: OutboundRouter) {
  return {
    node: async (req: IncomingMessage, res: ServerResponse) => {
      const aborted = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) aborted.abort();
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined || name === "host" || name.startsWith("mf-")) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const chunks: Buffer[] = [];
      if (hasBody) for await (const chunk of req) chunks.push(chunk as Buffer);
      const request = new Request(`https://${req.headers.host}${req.url ?? "/"}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
        signal: aborted.signal,
      });
      let response: Response;
      try {
        response = await router(request);
      } catch (err) {
        if (err instanceof Unreachable || aborted.signal.aborted) {
          req.socket.destroy();
          return;
        }
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(err instanceof Error ? err.message : String(err));
        return;
      }
      // fetch hands over a decoded body: its framing and encoding headers no longer describe what is written here.
      const encoded = response.headers.has("content-encoding");
      const dropped = new Set(["set-cookie", "connection", "keep-alive", "transfer-encoding"]);
      if (encoded) for (const name of ["content-encoding", "content-length"]) dropped.add(name);
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of response.headers) if (!dropped.has(name)) out[name] = value;
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) out["set-cookie"] = cookies;
      res.writeHead(response.status, response.statusText, out);
      if (!response.body) {
        res.end();
        return;
      }
      Readable.fromWeb(response.body as never)
        .on("error", () => res.destroy())
        .pipe(res);
    },
  };
}
