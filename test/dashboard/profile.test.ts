// Profile in workerd with real D1: name and e-mail by form; a wallet changes only with a signature from the new
// wallet, on a nonce issued to this tenant for this change.
import { describe, expect, it } from "vitest";
import { findTenantById } from "../../src/db/tenants.ts";
import { api } from "../support/client.ts";
import { createApiKey, createTenant, db } from "../support/factories.ts";
import { type DashboardClient, dashboardApp, newWallet, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

async function walletChange(client: DashboardClient, which: string, wallet: ReturnType<typeof newWallet>, signer = wallet) {
  const issued = await client.post("/dashboard/profile/wallet/message", { which, address: wallet.address, chainId: "8453" });
  const { message } = (await issued.json()) as { message: string };
  const signature = await signer.signMessage({ message });
  const res = await client.post("/dashboard/profile/wallet", { which, message, signature });
  return { status: res.status, body: (await res.json()) as { location?: string; error?: string }, message, signature };
}

describe("profile", () => {
  it("name and e-mail change by form; an e-mail another account has too is accepted", async () => {
    const other = await createTenant();
    const { client, tenant } = await signedIn(app);
    const { key } = await createApiKey({ tenant: (await findTenantById(db(), tenant.id))! });
    expect((await api("/v1/me", { key })).body.data.user.name).toBe(tenant.name);
    const ok = await client.post("/dashboard/profile", { name: "Renamed", email: "Renamed@Example.com" });
    expect(ok.status).toBe(303);
    expect(await findTenantById(db(), tenant.id)).toMatchObject({ name: "Renamed", email: "renamed@example.com" });
    // The tenant's keys see it on their next request (each key's object holds the tenant's row: it was told).
    expect((await api("/v1/me", { key })).body.data.user).toMatchObject({ name: "Renamed", email: "renamed@example.com" });
    expect((await client.post("/dashboard/profile", { name: "", email: "nope" })).status).toBe(400);
    expect(await findTenantById(db(), tenant.id)).toMatchObject({ name: "Renamed", email: "renamed@example.com" });
    // An e-mail is a contact, not an identity: sharing one says nothing and changes nothing of the other account.
    expect((await client.post("/dashboard/profile", { name: "Renamed", email: other.email })).status).toBe(303);
    expect(await findTenantById(db(), tenant.id)).toMatchObject({ email: other.email });
    expect(await findTenantById(db(), other.id)).toMatchObject({ name: other.name, email: other.email });
  });

  it("the primary or tempo wallet changes with the new wallet's signature, once", async () => {
    const { client, tenant } = await signedIn(app);
    const { key } = await createApiKey({ tenant: (await findTenantById(db(), tenant.id))! });
    expect((await api("/v1/me", { key })).status).toBe(200);
    const primary = newWallet();
    const done = await walletChange(client, "primary", primary);
    expect(done).toMatchObject({ status: 200, body: { location: "/dashboard/profile?done=primary" } });
    expect(done.message).toContain(`Set ${primary.address} as the primary wallet of the account ${tenant.id}.`);
    expect((await findTenantById(db(), tenant.id))?.walletAddress).toBe(primary.address);
    expect((await api("/v1/me", { key })).body.data.user.walletAddress).toBe(primary.address);
    const tempo = newWallet();
    expect((await walletChange(client, "tempo", tempo)).status).toBe(200);
    expect((await findTenantById(db(), tenant.id))?.tempoWalletAddress).toBe(tempo.address);
    // Each change is an account event naming the wallet.
    const activity = (await client.text("/dashboard/activity")).html;
    expect(activity).toContain("Wallet changed");
    expect(activity).toContain(primary.address);
    expect(activity).toContain(tempo.address);

    // Replayed: refused.
    const replay = await client.post("/dashboard/profile/wallet", {
      which: "primary",
      message: done.message,
      signature: done.signature,
    });
    expect(replay.status).toBe(400);
  });

  it("refuses a signature by another wallet than the new one, a message for another change or another tenant", async () => {
    const { client, tenant } = await signedIn(app);
    const before = await findTenantById(db(), tenant.id);
    const target = newWallet();
    const wrongSigner = await walletChange(client, "primary", target, newWallet());
    expect(wrongSigner).toMatchObject({ status: 400, body: { error: "The signature is not from the message's wallet" } });

    // A message issued for the tempo wallet cannot set the primary one.
    const issued = await client.post("/dashboard/profile/wallet/message", {
      which: "tempo",
      address: target.address,
      chainId: "8453",
    });
    const { message } = (await issued.json()) as { message: string };
    const crossed = await client.post("/dashboard/profile/wallet", {
      which: "primary",
      message,
      signature: await target.signMessage({ message }),
    });
    expect(crossed.status).toBe(400);

    // Another tenant's session cannot use a message issued to this one.
    const intruder = await signedIn(app);
    const issued2 = await client.post("/dashboard/profile/wallet/message", {
      which: "primary",
      address: target.address,
      chainId: "8453",
    });
    const m2 = ((await issued2.json()) as { message: string }).message;
    const stolen = await intruder.client.post("/dashboard/profile/wallet", {
      which: "primary",
      message: m2,
      signature: await target.signMessage({ message: m2 }),
    });
    expect(stolen.status).toBe(400);
    expect((await findTenantById(db(), intruder.tenant.id))?.walletAddress).toBe(intruder.tenant.walletAddress);
    expect(await findTenantById(db(), tenant.id)).toEqual(before);
  });
});
