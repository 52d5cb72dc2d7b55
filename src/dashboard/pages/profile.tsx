/**
 * Profile: name, e-mail and wallets. Name and e-mail change with a form. A wallet (primary: where paywalls pay;
 * or tempo) changes only with a Sign-In with Ethereum signature from the new wallet, for this tenant and this
 * change (the nonce is bound to both).
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { workerKeyStore } from "../../core/keys/key-object.ts";
import { changeTenantProfile, changeTenantWallet, TenantCreateInput } from "../../core/tenants.ts";
import type { DashboardEnv } from "../env.ts";
import { Layout, Notice } from "../layout.tsx";
import { accountEvent } from "../session.ts";
import { issueSiweMessage, SiweError, verifySiweMessage } from "../siwe.ts";
import { NoScriptWallet, walletRefusal } from "./sign-in.tsx";

type Ctx = Context<DashboardEnv>;
type Which = "primary" | "tempo";

const WALLET_COLUMN = { primary: "walletAddress", tempo: "tempoWalletAddress" } as const;
const walletPurpose = (tenantId: string, which: Which) => `wallet:${which}:${tenantId}`;
const field = (body: Record<string, unknown>, name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");
const whichOf = (value: string): Which | null => (value === "primary" || value === "tempo" ? value : null);

const DONE: Record<string, string> = {
  profile: "Your name and e-mail are saved.",
  primary: "Your primary wallet is changed. New paywalls pay to it.",
  tempo: "Your tempo wallet is changed.",
};

function profilePage(c: Ctx, extra: { error?: string; done?: string; values?: { name: string; email: string } }) {
  const t = c.var.session.tenant;
  const values = extra.values ?? { name: t.name, email: t.email };
  return (
    <Layout title="Profile" active="profile" tenantName={t.name} scripts={["siwe"]}>
      {extra.error && <Notice kind="error">{extra.error}</Notice>}
      {extra.done && DONE[extra.done] && <Notice kind="ok">{DONE[extra.done]}</Notice>}
      <section aria-labelledby="account-heading">
        <h2 id="account-heading">Account</h2>
        <dl class="profile">
          <dt>Account id</dt>
          <dd>
            <code>{t.id}</code>
          </dd>
          <dt>Name</dt>
          <dd>{t.name}</dd>
          <dt>E-mail</dt>
          <dd>{t.email}</dd>
          <dt>Primary wallet</dt>
          <dd>
            <code>{t.walletAddress}</code>
          </dd>
          <dt>Tempo wallet</dt>
          <dd>{t.tempoWalletAddress ? <code>{t.tempoWalletAddress}</code> : "none"}</dd>
        </dl>
      </section>
      <section aria-labelledby="edit-heading">
        <h2 id="edit-heading">Name and e-mail</h2>
        <form method="post" action="/dashboard/profile">
          <label for="profile-name">Name</label>
          <input id="profile-name" type="text" name="name" required maxlength={100} value={values.name} />
          <label for="profile-email">E-mail</label>
          <input id="profile-email" type="email" name="email" required maxlength={320} value={values.email} />
          <p>
            <button type="submit">Save profile</button>
          </p>
        </form>
      </section>
      <section aria-labelledby="wallet-heading">
        <h2 id="wallet-heading">Change a wallet</h2>
        <p>
          Switch your wallet extension to the new wallet, then confirm: the new wallet signs a message for this change. Payments
          of new paywalls go to the primary wallet.
        </p>
        <NoScriptWallet />
        <form method="post" action="/dashboard/profile/wallet" data-siwe="/dashboard/profile/wallet/message">
          <fieldset>
            <legend>Which wallet</legend>
            <label for="which-primary">
              <input id="which-primary" type="radio" name="which" value="primary" checked /> Primary wallet
            </label>
            <label for="which-tempo">
              <input id="which-tempo" type="radio" name="which" value="tempo" /> Tempo wallet
            </label>
          </fieldset>
          <button type="submit">Sign with the new wallet</button>
          <p class="hint" data-siwe-status aria-live="polite"></p>
        </form>
      </section>
    </Layout>
  );
}

export const profilePages = new Hono<DashboardEnv>();

profilePages.get("/profile", (c) => c.html(profilePage(c, { done: c.req.query("done") })));

profilePages.post("/profile", async (c) => {
  const body = await c.req.parseBody();
  const values = { name: field(body, "name"), email: field(body, "email") };
  const parsed = TenantCreateInput.pick({ name: true, email: true }).safeParse(values);
  if (!parsed.success) {
    const error = parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join("; ");
    return c.html(profilePage(c, { error, values }), 400);
  }
  const t = c.var.session.tenant;
  const changed = [parsed.data.name !== t.name && "name", parsed.data.email !== t.email && "e-mail"].filter(Boolean).join(", ");
  const updated = await changeTenantProfile(
    workerKeyStore(c.var.db, c.env),
    t.id,
    parsed.data,
    c.var.now,
    accountEvent(c, t.id, { action: "profile-changed", detail: changed || "nothing" }),
  );
  if (!updated) return c.redirect("/dashboard/sign-in", 303); // the account was deleted meanwhile
  return c.redirect("/dashboard/profile?done=profile", 303);
});

profilePages.post("/profile/wallet/message", async (c) => {
  const body = await c.req.parseBody();
  const which = whichOf(field(body, "which"));
  if (!which) return walletRefusal(c, "Choose the primary or the tempo wallet", 400, "/dashboard/profile");
  const t = c.var.session.tenant;
  const address = field(body, "address");
  try {
    const message = await issueSiweMessage(c.var.db, {
      origin: new URL(c.req.url).origin,
      address,
      chainId: field(body, "chainId"),
      purpose: walletPurpose(t.id, which),
      statement: `Set ${address} as the ${which} wallet of the account ${t.id}.`,
      now: c.var.now,
    });
    return c.json({ message });
  } catch (err) {
    if (err instanceof SiweError) return walletRefusal(c, err.message, 400, "/dashboard/profile");
    throw err;
  }
});

profilePages.post("/profile/wallet", async (c) => {
  const body = await c.req.parseBody();
  const which = whichOf(field(body, "which"));
  if (!which) return walletRefusal(c, "Choose the primary or the tempo wallet", 400, "/dashboard/profile");
  const t = c.var.session.tenant;
  let wallet: string;
  try {
    wallet = await verifySiweMessage(c.var.db, {
      origin: new URL(c.req.url).origin,
      message: field(body, "message"),
      signature: field(body, "signature"),
      purpose: walletPurpose(t.id, which),
      now: c.var.now,
    });
  } catch (err) {
    if (err instanceof SiweError) return walletRefusal(c, err.message, 400, "/dashboard/profile");
    throw err;
  }
  await changeTenantWallet(
    workerKeyStore(c.var.db, c.env),
    t.id,
    WALLET_COLUMN[which],
    wallet,
    c.var.now,
    accountEvent(c, t.id, { action: "wallet-changed", subject: `${which} wallet`, detail: wallet }),
  );
  return c.json({ location: `/dashboard/profile?done=${which}` });
});
