// A cookie-keeping client for dashboard tests, in workerd against real D1: it posts forms as a browser does
// (same Origin unless told otherwise), keeps the session cookie, and feeds every response to the secret-canary
// scan, except the one answer that shows a new raw key (callers mark it).
import { env, exports } from "cloudflare:workers";
import { Hono } from "hono";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { createDashboard } from "../../src/dashboard/app.tsx";
import type { DashboardOptions, SignupPolicy } from "../../src/dashboard/env.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { sha256Hex } from "../../src/lib/ids.ts";
import { canaries, observeResponse } from "../support/canaries.ts";
import { createTenant, db } from "../support/factories.ts";

export const ORIGIN = "https://dash.test";

/** The dashboard as the Worker mounts it, with an injected sign-up policy (tests move time with useTestClock). */
export function dashboardApp(options: DashboardOptions & { signup?: SignupPolicy; vars?: Record<string, string> } = {}): Fetcher {
  const app = new Hono<{ Bindings: Env }>().route("/dashboard", createDashboard(options));
  const bindings = options.vars ? { ...env, ...options.vars } : env;
  return { fetch: async (request) => app.fetch(request, bindings) };
}

/** The whole Worker, through its real fetch handler (the dashboard as deployed, with the real clock). */
export const workerApp: Fetcher = { fetch: (request) => exports.default.fetch(request) };

export type Fetcher = { fetch(request: Request): Promise<Response> };

export interface PostOptions {
  /** The `Origin` header; `null` sends none. Default: the dashboard's own origin. */
  origin?: string | null;
  headers?: Record<string, string>;
  /** The answer shows a secret once (the new raw key): not fed to the canary scan. */
  showsSecret?: boolean;
  ip?: string;
  /** Post as a form without JavaScript would (no `Accept: application/json` on the wallet endpoints). */
  noScript?: boolean;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  readonly app: Fetcher;
  constructor(app: Fetcher) {
    this.app = app;
  }

  private async send(request: Request, showsSecret = false): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (cookie) request.headers.set("cookie", cookie);
    const res = await this.app.fetch(request);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    if (!showsSecret) observeResponse(res.clone(), `${request.method} ${new URL(request.url).pathname}`);
    return res;
  }

  /** `showsSecret`: the page echoes a secret the caller brought (a sign-in link's own token): not scanned. */
  get(path: string, headers: Record<string, string> = {}, showsSecret = false): Promise<Response> {
    return this.send(new Request(`${ORIGIN}${path}`, { headers, redirect: "manual" }), showsSecret);
  }

  post(path: string, fields: Record<string, string | string[]> = {}, options: PostOptions = {}): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) body.append(k, item);
    // The wallet script (siwe.js) asks for JSON answers; a plain form post (no JavaScript) gets pages.
    const walletScript = /\/siwe|\/profile\/wallet/.test(path) && !options.noScript;
    const headers = new Headers({
      "content-type": "application/x-www-form-urlencoded",
      ...(walletScript ? { accept: "application/json" } : {}),
      ...options.headers,
    });
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin !== null) headers.set("origin", origin);
    if (options.ip) headers.set("cf-connecting-ip", options.ip);
    return this.send(new Request(`${ORIGIN}${path}`, { method: "POST", headers, body, redirect: "manual" }), options.showsSecret);
  }

  async text(path: string): Promise<{ status: number; html: string; location: string | null }> {
    const res = await this.get(path);
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
  }
}

/** A token or id that must never appear in a page or a log line. */
export function registerSecret(label: string, value: string) {
  canaries.register("canary", label, value);
}

/** A new tenant signed in through a one-time link; the client holds its session. */
export async function signedIn(app: Fetcher, overrides: Partial<Tenant> = {}) {
  const tenant = await createTenant(overrides);
  const client = new DashboardClient(app);
  const link = await createSignInLink(db(), { tenant: tenant.id, baseUrl: ORIGIN });
  const token = new URL(link.url).searchParams.get("token")!;
  registerSecret(`sign-in link token of ${tenant.id}`, token);
  registerSecret(`sign-in link token hash of ${tenant.id}`, await sha256Hex(token));
  const res = await client.post("/dashboard/sign-in/link", { token });
  if (res.status !== 303) throw new Error(`link sign-in failed: ${res.status}`);
  // The cookie carries the session id (only there); its hash is the row's key: neither may appear in a page or log.
  registerSecret(`session id hash of ${tenant.id}`, await sha256Hex(client.cookies.get("__Host-dashboard_session")!));
  return { tenant, client, token };
}

/** A wallet: a viem local account with a fresh private key. */
export const newWallet = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** SIWE as the dashboard's script does it: ask for the message, sign it, post it back. */
export async function siweSignIn(client: DashboardClient, wallet: PrivateKeyAccount, chainId = 8453) {
  const issued = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: String(chainId) });
  // Refused already (no nonce for this wallet): that refusal is the answer.
  if (!issued.ok) return { res: issued, body: (await issued.clone().json()) as { error?: string }, message: "", signature: "" };
  const { message } = (await issued.json()) as { message: string };
  const signature = await wallet.signMessage({ message });
  const res = await client.post("/dashboard/sign-in/siwe", { message, signature });
  return { res, body: (await res.clone().json()) as { location?: string; error?: string }, message, signature };
}
