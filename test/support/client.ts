// The one way tests call the Worker. Every response is fed to the secret-canary scan (canaries.ts) and read once
// into `{status, headers, text, body}`. With `env`, the request goes to the app of `createWorker()` over the test
// environment with those bindings or vars replaced (a failing D1, a fake rate limiter, smaller caps); without, it
// goes through the Worker's real fetch handler.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports, env as testEnv } from "cloudflare:workers";
import { createWorker } from "../../src/worker.ts";
import { observeResponse } from "./canaries.ts";

/** Bindings or vars that replace the test environment's for one call. */
export type EnvOverrides = Partial<Record<keyof Env, unknown>>;

export interface CallOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  method?: string;
  /** A string is sent as is; anything else as JSON (with `Content-Type: application/json` unless a header says otherwise). */
  body?: unknown;
  /** The client address (`CF-Connecting-IP`). */
  ip?: string;
  headers?: Record<string, string>;
  env?: EnvOverrides;
}

// Response bodies are checked by assertions, not by the type system: `any` keeps the tests readable.
// biome-ignore lint/suspicious/noExplicitAny: see above
export type AnyBody = any;

export interface ApiResult<T = AnyBody> {
  status: number;
  headers: Headers;
  /** The body as sent. */
  text: string;
  /** The body parsed as JSON, or `undefined` if it is not JSON. */
  body: T;
}

export interface ErrorBody {
  error: string;
  code: string;
  details?: unknown;
  meta: { requestId: string; timestamp: string };
}

/** The request `api()` sends: the key as a Bearer token, the client address, a JSON body. */
export function buildRequest(path: string, options: CallOptions = {}): Request {
  const headers = new Headers(options.headers);
  if (options.key !== undefined) headers.set("authorization", `Bearer ${options.key}`);
  if (options.ip !== undefined) headers.set("cf-connecting-ip", options.ip);
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return new Request(`https://api.test${path}`, { method: options.method ?? "GET", headers, body });
}

const app = createWorker();

// Config is parsed once per env object: the same overrides object gives the same env, so one scenario's calls
// share their parsed config as they would in production.
const envs = new WeakMap<EnvOverrides, Env>();
const envFor = (overrides: EnvOverrides): Env => {
  let merged = envs.get(overrides);
  if (!merged) {
    merged = { ...testEnv, ...overrides } as Env;
    envs.set(overrides, merged);
  }
  return merged;
};

/**
 * Sends a request and returns the raw response (for tests that need the stream or send a body `buildRequest`
 * cannot make). The response is fed to the canary scan.
 */
export async function send(request: Request, overrides?: EnvOverrides): Promise<Response> {
  const where = `${request.method} ${new URL(request.url).pathname}`;
  let res: Response;
  if (overrides) {
    const ctx = createExecutionContext();
    res = await app.fetch(request, envFor(overrides), ctx);
    await waitOnExecutionContext(ctx);
  } else {
    res = await exports.default.fetch(request);
  }
  observeResponse(res, where);
  return res;
}

/** Reads a response once into `{status, headers, text, body}`. */
export async function read<T = AnyBody>(res: Response): Promise<ApiResult<T>> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: body as T };
}

/** Calls the Worker (or, with `options.env`, the app over a modified environment) and reads the answer. */
export async function api<T = AnyBody>(path: string, options: CallOptions = {}): Promise<ApiResult<T>> {
  return read<T>(await send(buildRequest(path, options), options.env));
}
