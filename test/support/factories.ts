import { env, exports } from "cloudflare:workers";
import { insertKey } from "../../src/db/api-keys.ts";
import { getDb } from "../../src/db/client.ts";
import type { ApiKeyRow, KeyStatus, Tenant } from "../../src/db/schema.ts";
import { insertTenant } from "../../src/db/tenants.ts";
import { generateApiKey } from "../../src/lib/api-key.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { SCOPES, type Scope } from "../../src/lib/scopes.ts";
import { observeResponse, registerApiKey } from "./canaries.ts";

export const db = () => getDb(env.DB);

export const randomWallet = () => `0x${randomHex(20)}`;

export async function createTenant(overrides: Partial<Tenant> = {}): Promise<Tenant> {
  const id = newId("ten");
  return insertTenant(db(), {
    id,
    email: `${id}@example.com`,
    name: `Tenant ${id}`,
    walletAddress: randomWallet(),
    tempoWalletAddress: randomWallet(),
    ...overrides,
  });
}

export interface KeyOptions {
  tenant?: Tenant;
  scopes?: Scope[];
  allowIps?: string[];
  status?: KeyStatus;
  expiresAt?: Date | null;
  name?: string;
}

/** A tenant (new unless given) and a key for it; `key` is the raw key, as the tenant would hold it. */
export async function createApiKey(options: KeyOptions = {}): Promise<{ key: string; row: ApiKeyRow; tenant: Tenant }> {
  const tenant = options.tenant ?? (await createTenant());
  const { key, keyHash, keyPrefix } = await generateApiKey();
  const id = newId("key");
  // The raw key and its hash must never appear in a response or a log line (see canaries.ts).
  registerApiKey(`API key ${id} (${options.name ?? "test key"}) of ${tenant.id}`, key, keyHash);
  const row = await insertKey(db(), {
    id,
    tenantId: tenant.id,
    name: options.name ?? "test key",
    keyHash,
    keyPrefix,
    scopes: options.scopes ?? [...SCOPES],
    status: options.status ?? "active",
    expiresAt: options.expiresAt ?? null,
    allowedIps: options.allowIps ?? [],
    revokedAt: options.status === "revoked" ? new Date() : null,
  });
  return { key, row, tenant };
}

export interface CallOptions {
  key?: string;
  method?: string;
  body?: unknown;
  ip?: string;
  headers?: Record<string, string>;
}

/** The request `call()` sends: the key as a Bearer token, the client address, a JSON body. */
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

/** Calls the Worker through its real fetch handler. The response is also fed to the secret-canary scan (canaries.ts). */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const res = await exports.default.fetch(buildRequest(path, options));
  observeResponse(res, `${options.method ?? "GET"} ${path.split("?")[0]}`);
  return res;
}

/** Calls the Worker and parses its JSON body. */
export async function callJson<T = any>(
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await call(path, options);
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}
