/**
 * Tenants: who they are (name, e-mail, wallets) and how one is created. The operator CLI (`tenant create`) and the
 * dashboard's wallet sign-up use these same rules. A failure is an `ApiError` (`VALIDATION_ERROR`, `CONFLICT`).
 */
import { z } from "zod";
import type { Db } from "../db/client.ts";
import type { Tenant } from "../db/schema.ts";
import { insertTenantIfEmailFree } from "../db/tenants.ts";
import { newId } from "../lib/ids.ts";
import { ApiError } from "./http/errors.ts";
import { Name, parseInput as parse } from "./keys/management.ts";

const Wallet = z
  .string()
  .trim()
  .regex(/^0x[a-fA-F0-9]{40}$/, "Must be an address: 0x followed by 40 hex characters");

/** Emails are compared case-insensitively: stored trimmed and lowercased, so the unique index catches `A@x` vs `a@x`. */
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

export async function createTenant(db: Db, input: TenantCreateInput): Promise<TenantOutput> {
  const v = parse(TenantCreateInput, input);
  const tenant = await insertTenantIfEmailFree(db, {
    id: newId("ten"),
    email: v.email,
    name: v.name,
    walletAddress: v.wallet,
    tempoWalletAddress: v.tempoWallet ?? null,
  });
  if (!tenant) throw new ApiError("CONFLICT", `A tenant with the email ${v.email} already exists`);
  return tenantOutput(tenant);
}
