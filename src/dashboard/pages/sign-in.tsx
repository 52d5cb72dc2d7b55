/** Sign-in (wallet or one-time link), sign-up of a new wallet, and sign-out. */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { getAddress, isAddress } from "viem/utils";
import { countClient } from "../../core/rate-limit/limiter.ts";
import { LINK_TTL_MS, redeemSignInLink } from "../../core/sign-in-links.ts";
import { createTenant, TenantCreateInput } from "../../core/tenants.ts";
import { bindSessionToTenantQuery, findTenantByWallet } from "../../db/dashboard.ts";
import type { DashboardEnv } from "../env.ts";
import { Layout, Notice } from "../layout.tsx";
import { currentSession, endSession, SESSION_MAX_MS, startSession } from "../session.ts";
import { issueSiweMessage, SiweError, verifySiweMessage } from "../siwe.ts";

export const SIGN_IN_PURPOSE = "sign-in";

const origin = (url: string) => new URL(url).origin;

/** How long a sign-in link lasts, in words: "10 minutes". */
const LINK_LIFETIME = `${LINK_TTL_MS / 60_000} minutes`;

/** The wallet script asks for JSON; a form posted without JavaScript gets a page instead. */
export const wantsJson = (accept: string | undefined) => /application\/json/.test(accept ?? "");

/** What a wallet form posted without JavaScript gets: a page saying why, never raw JSON. */
export function NoWalletScript({ back }: { back: string }) {
  return (
    <Layout title="A wallet signature needs JavaScript">
      <Notice kind="error">
        Signing with a wallet runs in the page: turn on JavaScript (and a wallet extension) in this browser, or sign in with a
        one-time link from your operator.
      </Notice>
      <p>
        <a href={back}>Back</a>
      </p>
    </Layout>
  );
}

/** A wallet refusal: JSON for the wallet script, a page in the dashboard's frame for anything else. */
export function walletRefusal(c: Context<DashboardEnv>, message: string, status: 400 | 403, back: string) {
  if (wantsJson(c.req.header("accept"))) return c.json({ error: message }, status);
  return c.html(<NoWalletScript back={back} />, status);
}

/** Said where a wallet is needed, for browsers without JavaScript. */
export function NoScriptWallet() {
  return (
    <noscript>
      <p class="notice warning">
        Signing with a wallet needs JavaScript, which is off in this browser. Turn it on, or sign in with a one-time link.
      </p>
    </noscript>
  );
}
const field = (body: Record<string, unknown>, name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");

export const signInPages = new Hono<DashboardEnv>();

signInPages.get("/sign-in", async (c) => {
  if (await currentSession(c)) return c.redirect("/dashboard/keys", 303);
  return c.html(
    <Layout title="Sign in" scripts={["siwe"]}>
      {c.req.query("signed-out") !== undefined && (
        <Notice kind="ok">
          {c.req.query("signed-out") === "everywhere" ? "You are signed out on every device and browser." : "You are signed out."}
        </Notice>
      )}
      <section>
        <h2>With your wallet</h2>
        <p>
          Sign in with the wallet you are paid to (your primary or tempo wallet). Your wallet asks you to sign a message for this
          site; nothing is sent on chain and it costs nothing.
        </p>
        <NoScriptWallet />
        <form method="post" action="/dashboard/sign-in/siwe" data-siwe="/dashboard/sign-in/siwe/message">
          <button type="submit">Sign in with Ethereum</button>
          <p class="hint" data-siwe-status aria-live="polite"></p>
        </form>
        <p class="hint">
          {c.var.signup === "open"
            ? "A wallet that belongs to no account yet can sign up here: you are asked for a name and an e-mail next."
            : "Sign-up is closed on this deployment: ask the operator for an account."}
        </p>
      </section>
      <section>
        <h2>With a sign-in link</h2>
        <p>Ask your operator for a one-time sign-in link (valid for {LINK_LIFETIME}) and open it in this browser.</p>
      </section>
    </Layout>,
  );
});

/**
 * What anyone can post before signing in (a SIWE message, a signed message, a sign-in link, a sign-up) is counted
 * against the client address like the API's requests without a valid key (`countClient`): over the limit, `429` with
 * `Retry-After` as a dashboard page, and nothing is written.
 */
const countedPerAddress: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  await countClient(c as unknown as Parameters<typeof countClient>[0]);
  await next();
};

const noAccountMessage = (wallet: string) =>
  `No account uses the wallet ${wallet}, and sign-up is closed here. Ask the operator for an account.`;

/**
 * Step 1 of SIWE: a fresh nonce in the message the wallet will sign. With sign-up closed, a wallet of no tenant gets
 * no nonce (its signature could only be refused): a stranger's requests write no row.
 */
signInPages.post("/sign-in/siwe/message", countedPerAddress, async (c) => {
  const body = await c.req.parseBody();
  const address = field(body, "address");
  if (c.var.signup !== "open" && isAddress(address, { strict: false }) && !(await findTenantByWallet(c.var.db, address))) {
    return walletRefusal(c, noAccountMessage(getAddress(address)), 403, "/dashboard/sign-in");
  }
  try {
    const message = await issueSiweMessage(c.var.db, {
      origin: origin(c.req.url),
      address,
      chainId: field(body, "chainId"),
      purpose: SIGN_IN_PURPOSE,
      statement: "Sign in to the Paywall dashboard.",
      now: c.var.now,
    });
    return c.json({ message });
  } catch (err) {
    if (err instanceof SiweError) return walletRefusal(c, err.message, 400, "/dashboard/sign-in");
    throw err;
  }
});

/** Step 2 of SIWE: the signed message. Signs in the wallet's tenant, or starts a sign-up when that is open. */
signInPages.post("/sign-in/siwe", countedPerAddress, async (c) => {
  const body = await c.req.parseBody();
  let wallet: string;
  try {
    wallet = await verifySiweMessage(c.var.db, {
      origin: origin(c.req.url),
      message: field(body, "message"),
      signature: field(body, "signature"),
      purpose: SIGN_IN_PURPOSE,
      now: c.var.now,
    });
  } catch (err) {
    if (err instanceof SiweError) return walletRefusal(c, err.message, 400, "/dashboard/sign-in");
    throw err;
  }
  const tenant = await findTenantByWallet(c.var.db, wallet);
  if (tenant) {
    await startSession(c, { tenantId: tenant.id }, wallet);
    return c.json({ location: "/dashboard/keys" });
  }
  if (c.var.signup !== "open") {
    return walletRefusal(c, noAccountMessage(wallet), 403, "/dashboard/sign-in");
  }
  await startSession(c, { signupWallet: wallet }, wallet);
  return c.json({ location: "/dashboard/sign-up" });
});

function linkPage(token: string, error?: string) {
  return (
    <Layout title="Sign in">
      {error && <Notice kind="error">{error}</Notice>}
      <section>
        <p>This one-time link signs you in to the dashboard. It works once, within {LINK_LIFETIME} of being made.</p>
        <form method="post" action="/dashboard/sign-in/link">
          <input type="hidden" name="token" value={token} />
          <button type="submit">Sign in</button>
        </form>
      </section>
    </Layout>
  );
}

/** Opening a link shows a button: the link is used by the POST, so a link preview that fetches it does not use it up. */
signInPages.get("/sign-in/link", (c) => c.html(linkPage(c.req.query("token") ?? "")));

signInPages.post("/sign-in/link", countedPerAddress, async (c) => {
  const body = await c.req.parseBody();
  const tenantId = await redeemSignInLink(c.var.db, field(body, "token"), c.var.now);
  if (!tenantId) {
    return c.html(
      <Layout title="Sign in">
        <Notice kind="error">{`This sign-in link is not valid: it has expired (links last ${LINK_LIFETIME}) or was already used.`}</Notice>
        <p>
          <a href="/dashboard/sign-in">Sign in another way</a>
        </p>
      </Layout>,
      400,
    );
  }
  await startSession(c, { tenantId }, "link");
  return c.redirect("/dashboard/keys", 303);
});

function signUpPage(wallet: string, values: { name?: string; email?: string }, error?: string) {
  return (
    <Layout title="Create your account">
      {error && <Notice kind="error">{error}</Notice>}
      <section>
        <p>
          Your wallet <code>{wallet}</code> becomes the account's primary wallet: paywalls pay to it. Tell us your name and an
          e-mail for contact.
        </p>
        <form method="post" action="/dashboard/sign-up">
          <label for="signup-name">Name</label>
          <input id="signup-name" type="text" name="name" required maxlength={100} value={values.name ?? ""} />
          <label for="signup-email">E-mail</label>
          <input id="signup-email" type="email" name="email" required maxlength={320} value={values.email ?? ""} />
          <p>
            <button type="submit">Create account</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}

async function signUpSession(c: Parameters<typeof currentSession>[0]) {
  const found = await currentSession(c);
  return found && !found.tenant && found.session.signupWallet
    ? { idHash: found.idHash, wallet: found.session.signupWallet }
    : null;
}

signInPages.get("/sign-up", async (c) => {
  const pending = await signUpSession(c);
  if (!pending) return c.redirect("/dashboard/sign-in", 303);
  return c.html(signUpPage(pending.wallet, {}));
});

signInPages.post("/sign-up", countedPerAddress, async (c) => {
  const pending = await signUpSession(c);
  if (!pending) return c.redirect("/dashboard/sign-in", 303);
  const body = await c.req.parseBody();
  const values = { name: field(body, "name"), email: field(body, "email") };
  const parsed = TenantCreateInput.pick({ name: true, email: true }).safeParse(values);
  if (!parsed.success) {
    return c.html(
      signUpPage(pending.wallet, values, parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join("; ")),
      400,
    );
  }
  // An e-mail another account has is accepted like any other: refusing it would tell whoever holds a wallet which
  // e-mails have accounts here.
  const tenant = await createTenant(c.var.db, { ...parsed.data, wallet: pending.wallet }, { takenEmail: "accept" });
  await bindSessionToTenantQuery(c.var.db, pending.idHash, tenant.id, new Date(c.var.now.getTime() + SESSION_MAX_MS));
  return c.redirect("/dashboard/keys", 303);
});

signInPages.post("/sign-out", async (c) => {
  await endSession(c);
  return c.redirect("/dashboard/sign-in?signed-out", 303);
});
