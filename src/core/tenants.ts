/**
 * Tenants: who they are (name, e-mail, wallets), how one is created and how its profile changes. The operator CLI
 * (`tenant create`) and the dashboard (wallet sign-up, profile) use these same rules. A failure is an `ApiError`
 * (`VALIDATION_ERROR`, `CONFLICT`).
 */
import type { BatchItem } from "drizzle-orm/batch";
import { z } from "zod";
import { listLiveKeyHashesOfTenant } from "../db/api-keys.ts";
import type { Db } from "../db/client.ts";
import type { Tenant } from "../db/schema.ts";
import { insertTenant, insertTenantIfEmailFree, updateTenantProfile, updateTenantWallet } from "../db/tenants.ts";
import { newId } from "../lib/ids.ts";
import { ApiError } from "./http/errors.ts";
import type { KeyStore } from "./keys/key-object.ts";
import { Name, parseInput as parse } from "./keys/management.ts";

const Wallet = z
  .string()
  .trim()
  .regex(/^0x[a-fA-F0-9]{40}$/, "Must be an address: 0x followed by 40 hex characters");

/** E-mails are stored trimmed and lowercased, so the operator's duplicate check catches `A@x` vs `a@x`. */
const Email = z.string().trim().toLowerCase().pipe(z.email("Must be an email address").max(320));

export const TenantCreateInput = z.strictObject({
  email: Email,
  name: Name,
  wallet: Wallet,
  tempoWallet: Wallet.nullish(),
});
export type TenantCreateInput = z.input<typeof TenantCreateInput>;

export interface TenantOutput {
  id: string;
  email: string;
  name: string;
  walletAddress: string;
  tempoWalletAddress: string | null;
  createdAt: string;
}

export const tenantOutput = (t: Tenant): TenantOutput => ({
  id: t.id,
  email: t.email,
  name: t.name,
  walletAddress: t.walletAddress,
  tempoWalletAddress: t.tempoWalletAddress,
  createdAt: t.createdAt.toISOString(),
});

/**
 * Creates a tenant. An e-mail is a contact, not an identity, so two tenants may share one; the operator CLI still
 * refuses an e-mail another tenant has (`CONFLICT`: most likely the same customer twice), while dashboard sign-up
 * accepts it (`takenEmail: "accept"`) so that a stranger holding a wallet learns nothing of which e-mails have accounts.
 */
export async function createTenant(
  db: Db,
  input: TenantCreateInput,
  { takenEmail }: { takenEmail: "refuse" | "accept" } = { takenEmail: "refuse" },
): Promise<TenantOutput> {
  const v = parse(TenantCreateInput, input);
  const row = {
    id: newId("ten"),
    email: v.email,
    name: v.name,
    walletAddress: v.wallet,
    tempoWalletAddress: v.tempoWallet ?? null,
  };
  const tenant = takenEmail === "accept" ? await insertTenant(db, row) : await insertTenantIfEmailFree(db, row);
  if (!tenant) throw new ApiError("CONFLICT", `A tenant with the email ${v.email} already exists`);
  return tenantOutput(tenant);
}

/**
 * Each key's Durable Object holds its tenant's row with the key's (GET /v1/me answers from it, a paywall's wallet is
 * checked against it): after a change to the tenant commits, the objects of its keys that can still authenticate are
 * told, before the change is reported done. A key created meanwhile reads the tenant as changed: its object reads D1
 * after the key exists, and the key's listing runs after the change committed.
 */
async function forgetTenantKeys(store: KeyStore, tenantId: string): Promise<void> {
  await store.cache.forget(await listLiveKeyHashesOfTenant(store.db, tenantId));
}

/** Sets the tenant's name and e-mail. */
export async function changeTenantProfile(
  store: KeyStore,
  id: string,
  profile: { name: string; email: string },
  now: Date,
  audit?: BatchItem<"sqlite">,
): Promise<Tenant | undefined> {
  const row = await updateTenantProfile(store.db, id, profile, now, audit);
  if (row) await forgetTenantKeys(store, id);
  return row;
}

/** Sets the tenant's primary (`walletAddress`) or tempo wallet. */
export async function changeTenantWallet(
  store: KeyStore,
  id: string,
  which: "walletAddress" | "tempoWalletAddress",
  address: string,
  now: Date,
  audit?: BatchItem<"sqlite">,
): Promise<Tenant | undefined> {
  const row = await updateTenantWallet(store.db, id, which, address, now, audit);
  if (row) await forgetTenantKeys(store, id);
  return row;
}
