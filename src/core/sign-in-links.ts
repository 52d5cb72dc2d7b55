/**
 * One-time sign-in links, made by an operator (`npm run -s admin -- dashboard-link --tenant ten_…`) or by `npm run dev`
 * for the demo tenant: a random token in the URL, only its SHA-256 stored, usable once within 10 minutes.
 * Plain functions over a drizzle `Db` (no `cloudflare:workers`): the dashboard redeems links, and the CLI makes them
 * without importing an app.
 */

import type { Db } from "../db/client.ts";
import { consumeSignInLink, insertSignInLink } from "../db/dashboard.ts";
import { findTenantById } from "../db/tenants.ts";
import { randomHex, sha256Hex } from "../lib/ids.ts";
import { ApiError } from "./http/errors.ts";

export const LINK_TTL_MS = 10 * 60 * 1000;
const TOKEN = /^[0-9a-f]{64}$/;

/** Makes a link for the tenant on the dashboard at `baseUrl` (e.g. `http://localhost:8787`). */
export async function createSignInLink(
  db: Db,
  input: { tenant: string; baseUrl: string },
  now: Date = new Date(),
): Promise<{ url: string; expiresAt: string }> {
  let base: URL;
  try {
    base = new URL(input.baseUrl);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "Invalid input: baseUrl: Must be an absolute http(s) URL", {
      details: [{ path: "baseUrl", message: "Must be an absolute http(s) URL" }],
    });
  }
  if (base.protocol !== "https:" && base.protocol !== "http:") {
    throw new ApiError("VALIDATION_ERROR", "Invalid input: baseUrl: Must be an absolute http(s) URL", {
      details: [{ path: "baseUrl", message: "Must be an absolute http(s) URL" }],
    });
  }
  if (!(await findTenantById(db, input.tenant))) throw new ApiError("NOT_FOUND", `Tenant ${input.tenant} not found`);
  const token = randomHex(32);
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
  await insertSignInLink(db, await sha256Hex(token), input.tenant, now, expiresAt);
  const url = new URL("/dashboard/sign-in/link", base.origin);
  url.searchParams.set("token", token);
  return { url: url.toString(), expiresAt: expiresAt.toISOString() };
}

/** Uses a link's token up: the tenant id it signs in, or `undefined` (unknown, used, or expired). */
export async function redeemSignInLink(db: Db, token: string, now: Date): Promise<string | undefined> {
  if (!TOKEN.test(token)) return undefined;
  return consumeSignInLink(db, await sha256Hex(token), now);
}
