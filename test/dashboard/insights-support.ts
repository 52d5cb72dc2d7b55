// Signing in to the dashboard for the services and earnings page tests: through a real one-time link
// (createSignInLink, then the link's form POST) against the whole Worker, as a tenant would. Redirects are not
// followed (a browser would send the cookie; a bare fetch would not); every answer goes to the secret-canary scan.
import { exports } from "cloudflare:workers";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { canaries, observeResponse } from "../support/canaries.ts";
import { db } from "../support/factories.ts";

const ORIGIN = "https://api.test";

async function send(path: string, init: RequestInit & { headers: Record<string, string> }) {
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { ...init, redirect: "manual" }));
  observeResponse(res.clone(), `${init.method ?? "GET"} ${path.split("?")[0]}`);
  return res;
}

const form = (fields: Record<string, string>, cookie: string | undefined, origin: string) => ({
  method: "POST",
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin, ...(cookie ? { cookie } : {}) },
});

/** A signed-in tenant's cookie header. */
export async function signIn(tenant: Tenant): Promise<string> {
  const { url } = await createSignInLink(db(), { tenant: tenant.id, baseUrl: ORIGIN });
  const token = new URL(url).searchParams.get("token") as string;
  canaries.register("canary", `sign-in link token of ${tenant.id}`, token);
  const res = await send("/dashboard/sign-in/link", form({ token }, undefined, ORIGIN));
  const cookie = res.headers.get("set-cookie")?.split(";")[0];
  if (res.status !== 303 || !cookie) throw new Error(`sign-in link refused: ${res.status}`);
  return cookie;
}

/** GET a dashboard page as the signed-in tenant: status and HTML. */
export async function page(cookie: string, path: string): Promise<{ status: number; html: string; headers: Headers }> {
  const res = await send(path, { headers: { cookie } });
  return { status: res.status, html: await res.text(), headers: res.headers };
}

/** POST a dashboard form (same origin unless told otherwise, form-encoded), signed in when `cookie` is given. */
export async function submit(cookie: string | undefined, path: string, fields: Record<string, string>, origin = ORIGIN) {
  const res = await send(path, form(fields, cookie, origin));
  return { status: res.status, html: await res.text(), location: res.headers.get("location") };
}

/** The text of the page without tags (what a reader sees), whitespace collapsed. */
export const text = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, " ")
    .trim();
