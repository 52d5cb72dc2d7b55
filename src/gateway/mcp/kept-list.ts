/**
 * A plain `tools/list` answered with the SDK's own answer (docs/mcp.md, "Speed"). The SDK answers a plain list of the
 * same tools with the same bytes whatever the request's id, and its transport checks only the request's headers; so
 * once it has answered one (a 200 whose body is `{"result":…,"jsonrpc":"2.0","id":<id>}`), the isolate keeps that
 * body without its id, by the service's state and the headers the transport checked, and answers the next plain list
 * of that state with those headers from it, with the request's own id. Anything else, a cursor or `_meta` included,
 * goes to the SDK.
 */

import { acceptsGzip, clientAcceptEncoding, type GzipHead, gzipAnswer, gzipHead } from "../../lib/gzip-kept.ts";

/** A JSON-RPC request id, as the SDK's schema takes it (a string or an integer). */
export type RequestId = string | number;

/** The SDK's answer to a plain list, kept without its id: `head` + the id as JSON + `}` is the answer (UTF-8). */
export interface KeptList {
  head: Uint8Array;
  /** The same, compressed once for clients that accept gzip (src/lib/gzip-kept.ts). */
  gzip: GzipHead;
  status: number;
  headers: [string, string][];
}

/** The id of a plain `tools/list` (`jsonrpc`, `id` and `method` only: no params); `undefined` for any other message. */
export function plainListId(message: unknown): RequestId | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { jsonrpc, id, method, ...rest } = message as Record<string, unknown>;
  if (jsonrpc !== "2.0" || method !== "tools/list" || Object.keys(rest).length > 0) return undefined;
  return typeof id === "string" || Number.isSafeInteger(id) ? (id as RequestId) : undefined;
}

/** What the SDK's transport reads of a POST's headers before it answers (Accept, Content-Type, the protocol version). */
export function checkedHeaders(headers: Headers): string {
  return JSON.stringify([headers.get("accept"), headers.get("content-type"), headers.get("mcp-protocol-version")]);
}

/**
 * The SDK's answer to a plain list with `id`, kept without its id; `undefined` when it is not a result written as
 * `{"result":…,"jsonrpc":"2.0","id":<id>}` (a refusal, or an SDK that writes its answers otherwise: never kept).
 */
export function keepList(status: number, headers: Headers, body: string, id: RequestId): KeptList | undefined {
  const tail = `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
  if (status !== 200 || !body.startsWith('{"result":') || !body.endsWith(tail)) return undefined;
  const head = utf8.encode(body.slice(0, body.length - JSON.stringify(id).length - 1));
  return { head, gzip: gzipHead(head), status, headers: [...headers] };
}

/**
 * The kept answer to `request` with its own id (its bytes copied, never encoded again); to a client that accepts gzip,
 * compressed once with the id appended to the same gzip member (`encodeBody: "manual"`: the runtime would otherwise
 * compress it again for its Content-Encoding). No `Vary`: a POST's answer is never kept by a shared cache.
 */
export function keptAnswer(kept: KeptList, id: RequestId, request: Request): Response {
  const end = utf8.encode(`${JSON.stringify(id)}}`);
  const headers = new Headers(kept.headers);
  if (acceptsGzip(clientAcceptEncoding(request))) {
    headers.set("Content-Encoding", "gzip");
    return new Response(gzipAnswer(kept.gzip, end), { status: kept.status, headers, encodeBody: "manual" });
  }
  const body = new Uint8Array(kept.head.byteLength + end.byteLength);
  body.set(kept.head);
  body.set(end, kept.head.byteLength);
  return new Response(body, { status: kept.status, headers });
}

const utf8 = new TextEncoder();
