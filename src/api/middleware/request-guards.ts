import type { Context, MiddlewareHandler } from "hono";
import type { HttpEnv } from "../../core/http/env.ts";
import { ApiError, CLIENT_ABORT_STATUS } from "../../core/http/errors.ts";
import { hasPrototypeKey } from "../../lib/json-shape.ts";

export const MAX_BODY_BYTES = 100 * 1024;

const tooLarge = () => new ApiError("VALIDATION_ERROR", `Request body exceeds ${MAX_BODY_BYTES} bytes`, { status: 413 });

/**
 * Refuses a body whose declared `Content-Length` is over 100 KiB with 413, without reading it: the one body check
 * that runs before authentication. Chunked bodies are measured while they are read, after authentication.
 */
export function refuseDeclaredOversize(): MiddlewareHandler {
  return async function refuseDeclaredOversize(c, next) {
    const declared = c.req.header("content-length");
    if (c.req.raw.body !== null && declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
    await next();
  };
}

/** The JSON media types the route validators read (the same pattern as @hono/zod-openapi). */
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/** Reads the whole body, at most 100 KiB. A stream that fails mid-way means the client is gone: logged as 499. */
async function readBounded(c: Context<HttpEnv>, body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      c.set("errorCode", "CLIENT_ABORTED");
      throw new ApiError("VALIDATION_ERROR", "The request body was not received in full", { status: CLIENT_ABORT_STATUS });
    }
    if (chunk.done) break;
    size += chunk.value.length;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(chunk.value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * Reads the body of an operation that takes one, mounted by `scopedRoute`/`authenticatedRoute` (src/api/openapi.ts) so
 * it runs once the caller is authenticated and holds the operation's scope: it must say it is JSON (415 otherwise, so a form post is
 * never read as an empty object), fit in 100 KiB (413), arrive in full (499 when the client disconnects) and carry
 * no `__proto__` key, which the schemas could not see. The route's validator then parses the buffered copy.
 */
export function readJsonBody(): MiddlewareHandler<HttpEnv> {
  return async function readJsonBody(c, next) {
    const body = c.req.raw.body;
    if (body !== null) {
      if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) {
        throw new ApiError("VALIDATION_ERROR", "Request body must be JSON (Content-Type: application/json)", { status: 415 });
      }
      const bytes = await readBounded(c, body);
      if (hasPrototypeKey(new TextDecoder().decode(bytes))) {
        throw new ApiError("VALIDATION_ERROR", "The request is not valid", {
          details: [{ path: "", message: "The key __proto__ is not allowed" }],
        });
      }
      c.req.raw = new Request(c.req.raw, { body: bytes });
    }
    await next();
  };
}

/** Query parameter names that usually carry a credential, compared without case, `-` or `_`. */
const KEY_PARAM_NAMES = new Set([
  "apikey",
  "key",
  "xapikey",
  "apitoken",
  "token",
  "accesstoken",
  "authtoken",
  "auth",
  "authorization",
  "bearer",
]);
const KEY_IN_TEXT = /mpk_[0-9a-f]{8}/i;

export const KEY_IN_URL_MESSAGE =
  "API keys are never accepted in the URL, where logs and browser history keep them: send the key in a header, `Authorization: Bearer <key>` or `X-Api-Key: <key>`, and replace a key that was sent in a URL";

/** The query parameters that look like an API key: by name (`api_key`, `apiKey`, `token`, …) or by value (`mpk_…`). */
export function keyLikeParams(params: URLSearchParams): string[] {
  const found = new Set<string>();
  for (const [name, value] of params) {
    const normalized = name.toLowerCase().replace(/[-_]/g, "");
    if (KEY_PARAM_NAMES.has(normalized) || KEY_IN_TEXT.test(name) || KEY_IN_TEXT.test(value)) found.add(name);
  }
  return [...found];
}

/** Refuses a key sent in the URL, before authentication, with a message that says where keys go. */
export function refuseKeyInUrl(): MiddlewareHandler<HttpEnv> {
  return async function refuseKeyInUrl(c, next) {
    const names = keyLikeParams(new URL(c.req.url).searchParams);
    if (names.length > 0) {
      c.set("errorCode", "API_KEY_IN_URL");
      throw new ApiError("VALIDATION_ERROR", KEY_IN_URL_MESSAGE, {
        details: names.map((path) => ({ path, message: "API keys go in a header, never in the URL" })),
      });
    }
    await next();
  };
}

/** An operation's declared query parameter names, and whether it needs a key. */
export interface DeclaredOperation {
  names: ReadonlySet<string>;
  needsKey: boolean;
}

/** The documented operation a request is for (by method and path), or `undefined` if none. */
export type DeclaredQuery = (method: string, path: string) => DeclaredOperation | undefined;

interface RouteDefinition {
  type: string;
  route?: { method: string; path: string; request?: { query?: unknown }; security?: Record<string, unknown>[] };
}

/**
 * The query parameters of every documented operation, read once from the OpenAPI registry (the schemas are the
 * contract): an operation without a query schema declares none.
 */
export function declaredQueryFrom(registry: { definitions: readonly RouteDefinition[] }): DeclaredQuery {
  let table: ({ method: string; pattern: RegExp } & DeclaredOperation)[] | undefined;
  return (method, path) => {
    table ??= registry.definitions.flatMap((def) => {
      if (def.type !== "route" || !def.route) return [];
      const { route } = def;
      const shape = (route.request?.query as { shape?: Record<string, unknown> } | undefined)?.shape;
      const pattern = new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^/}]+\}/g, "[^/]+")}$`);
      const needsKey = (route.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
      return [{ method: route.method.toUpperCase(), pattern, names: new Set(Object.keys(shape ?? {})), needsKey }];
    });
    const wanted = method === "HEAD" ? "GET" : method;
    return table.find((op) => op.method === wanted && op.pattern.test(path));
  };
}

/**
 * Every documented operation treats its query string the same way: a parameter it does not declare is refused, and
 * so is a repeated one (a list filter takes one value). Values are then checked by the operation's own schema.
 * Mounted twice: before authentication for the operations that need no key, after it for the others, so a request
 * without a key learns nothing but `401`.
 */
export function strictQuery(declared: DeclaredQuery, operations: "without key" | "with key"): MiddlewareHandler<HttpEnv> {
  return async function strictQuery(c, next) {
    const operation = declared(c.req.method, c.req.path);
    if (operation && operation.needsKey === (operations === "with key")) {
      const { names } = operation;
      const counts = new Map<string, number>();
      for (const name of new URL(c.req.url).searchParams.keys()) counts.set(name, (counts.get(name) ?? 0) + 1);
      const issues = [...counts].flatMap(([name, count]) => {
        if (!names.has(name)) return [{ path: name, message: "Unknown query parameter" }];
        if (count > 1) return [{ path: name, message: `Repeated query parameter: send \`${name}\` once` }];
        return [];
      });
      if (issues.length > 0) throw new ApiError("VALIDATION_ERROR", "The request is not valid", { details: issues });
    }
    await next();
  };
}
