/**
 * Post/Redirect/Get with a message shown once: a form's POST stores what the next page must show (e.g. the new raw
 * key) server-side, encrypted with the key ring and bound to the session, and redirects to a page whose URL names it.
 * Reading it deletes it (one conditional DELETE … RETURNING), so a reload or Back shows it no more, and a form is
 * never sent twice. Unread messages expire after 10 minutes (and are swept when the next one is stored).
 */
import type { Context } from "hono";
import { keyRing } from "../core/config.ts";
import { decryptSecret, encryptSecret, secretAad } from "../core/secrets/secret-box.ts";
import { consumeFlash, insertFlash } from "../db/dashboard.ts";
import { randomHex } from "../lib/ids.ts";
import type { DashboardEnv } from "./env.ts";

export const FLASH_TTL_MS = 10 * 60 * 1000;
const FLASH_ID = /^[0-9a-f]{32}$/;

const aad = (c: Context<DashboardEnv>, id: string) => secretAad(c.var.session.tenant.id, "flash", id, "body");

/** Stores `value` for the next page of this session; returns the id to put in its URL. */
export async function putFlash(c: Context<DashboardEnv>, value: unknown): Promise<string> {
  const id = randomHex(16);
  const body = await encryptSecret(keyRing(c.env), JSON.stringify(value), aad(c, id));
  await insertFlash(c.var.db, { id, sessionId: c.var.session.idHash, body, now: c.var.now, ttlMs: FLASH_TTL_MS });
  return id;
}

/** The message `id` of this session, once: `undefined` when it was read already, expired, or is another session's. */
export async function takeFlash<T>(c: Context<DashboardEnv>, id: string | undefined): Promise<T | undefined> {
  if (!id || !FLASH_ID.test(id)) return undefined;
  const body = await consumeFlash(c.var.db, id, c.var.session.idHash, c.var.now);
  if (!body) return undefined;
  return JSON.parse(await decryptSecret(keyRing(c.env), body, aad(c, id))) as T;
}
