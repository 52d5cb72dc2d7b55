/**
 * An upstream stand-in that records every request it receives and answers according to its path, so tests running
 * at the same time never change each other's behaviour (no shared mode switch):
 *
 * - a path segment `status/<code>`   → answers `<code>` with a JSON body `{ "status": <code> }`
 * - a path segment `hang/<ms>`       → waits `<ms>` (at most 60 s, or until the caller goes away), then answers 200
 * - a path segment `redirect`        → answers 302 with `Location: /redirected` (a gateway must not follow it)
 * - a path segment `text/<words>`    → answers 200 `text/plain` with `<words>` (URL-decoded)
 * - a path segment `html`            → answers 200 `text/html`: a page whose `<script>` is the `js` query parameter
 *                                      (default: it sets the title to "script ran"), with every header an upstream
 *                                      could use against a page's origin (UPSTREAM_HOSTILE_HEADERS)
 * - a path segment `header/<name>/<value>` → as below, plus that response header (URL-decoded; e.g. `Set-Cookie`)
 * - anything else                    → answers 200 with a JSON echo: `{ method, path, query, headers, body }`
 *
 * Every answer carries `x-upstream-request-id` (the recorded request's id) and `x-upstream-secret: upstream-only`
 * (a header the gateway may pass back; it is not a credential).
 *
 * Recorded requests: `upstream.requests` in process, or over HTTP `GET /__upstream/requests?prefix=/my-test` (JSON
 * array, oldest first; `prefix` filters by path start) and `DELETE /__upstream/requests`. Give each test its own path
 * prefix (e.g. `/<random id>/…`) and read back only its own requests.
 */
import type { IncomingMessage } from "node:http";
import { type LocalServer, listen, readBody, sendJson } from "./http-server.ts";

export interface RecordedRequest {
  id: number;
  /** ms since the epoch, when the request arrived. */
  at: number;
  method: string;
  /** The path without the query. */
  path: string;
  /** The raw query string without `?` ("" when none). */
  query: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body as UTF-8 text ("" when none). */
  body: string;
}

export interface LocalUpstream extends LocalServer {
  requests: RecordedRequest[];
  /** The recorded requests whose path starts with `prefix`. */
  requestsUnder(prefix: string): RecordedRequest[];
}

const MAX_HANG_MS = 60_000;

/**
 * What the `html` route sends beside its page: a cookie, a permissive security policy of its own, framing and CORS
 * grants, hop-by-hop headers, a payment challenge of its own and its software's name. A gateway must pass none on.
 */
export const UPSTREAM_HOSTILE_HEADERS: Record<string, string> = {
  "set-cookie": "upstream_session=stolen; Path=/; SameSite=None",
  "content-security-policy": "default-src * 'unsafe-inline' 'unsafe-eval'",
  "x-frame-options": "ALLOWALL",
  "access-control-allow-origin": "*",
  "access-control-allow-credentials": "true",
  "cross-origin-resource-policy": "cross-origin",
  "keep-alive": "timeout=5",
  "www-authenticate": 'Payment id="upstream", method="tempo", intent="charge"',
  "payment-required": "eyJ1cHN0cmVhbSI6dHJ1ZX0",
  "x-powered-by": "upstream-stub/1.0",
  refresh: "5; url=https://evil.example/",
};

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export async function startUpstream(options: { port?: number } = {}): Promise<LocalUpstream> {
  const requests: RecordedRequest[] = [];
  let nextId = 1;
  const requestsUnder = (prefix: string) => requests.filter((r) => r.path.startsWith(prefix));

  const server = await listen(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://upstream");
    if (url.pathname === "/__upstream/requests") {
      if (req.method === "DELETE") {
        requests.length = 0;
        return sendJson(res, 200, { cleared: true });
      }
      return sendJson(res, 200, requestsUnder(url.searchParams.get("prefix") ?? ""));
    }

    const recorded: RecordedRequest = {
      id: nextId++,
      at: Date.now(),
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.search.replace(/^\?/, ""),
      headers: headersOf(req),
      body: (await readBody(req)).toString("utf8"),
    };
    requests.push(recorded);
    const common = { "x-upstream-request-id": String(recorded.id), "x-upstream-secret": "upstream-only" };

    const segments = url.pathname.split("/").filter(Boolean);
    const after = (name: string) => {
      const i = segments.indexOf(name);
      return i >= 0 ? (segments[i + 1] ?? "") : undefined;
    };
    const status = after("status");
    if (status !== undefined && /^[1-5]\d\d$/.test(status) && Number(status) >= 200) {
      return sendJson(res, Number(status), { status: Number(status) }, common);
    }
    const hang = after("hang");
    if (hang !== undefined) {
      const ms = Math.min(Number.parseInt(hang, 10) || 0, MAX_HANG_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        res.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed || res.writableEnded) return;
      return sendJson(res, 200, { hungMs: ms }, common);
    }
    if (segments.includes("redirect")) {
      res.writeHead(302, { location: "/redirected", ...common });
      res.end();
      return;
    }
    const text = after("text");
    if (text !== undefined) {
      const body = decodeURIComponent(text);
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), ...common });
      res.end(body);
      return;
    }
    if (segments.includes("html")) {
      const js = url.searchParams.get("js") ?? 'document.title = "script ran";';
      const body = `<!doctype html><html><head><title>upstream page</title></head><body><p>paid</p><script>${js}</script></body></html>`;
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        ...UPSTREAM_HOSTILE_HEADERS,
        ...common,
      });
      res.end(body);
      return;
    }
    const { id: _id, at: _at, ...echo } = recorded;
    const header = after("header");
    const extra = header
      ? { [decodeURIComponent(header)]: decodeURIComponent(segments[segments.indexOf("header") + 2] ?? "") }
      : {};
    return sendJson(res, 200, echo, { ...common, ...extra });
  }, options.port ?? 0);

  return { ...server, requests, requestsUnder };
}
