// Dashboard sign-in in workerd with real D1: one-time links, Sign-In with Ethereum (real signatures by viem local
// accounts), sign-up open and closed, session cookies and their idle and absolute expiry (a test clock), sign-out.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { createSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { createDashboard } from "../../src/dashboard/app.tsx";
import { findTenantByWallet } from "../../src/db/dashboard.ts";
import { findTenantById } from "../../src/db/tenants.ts";
import worker from "../../src/index.ts";
import { sha256Hex } from "../../src/lib/ids.ts";
import { useTestClock } from "../support/clock.ts";
import { createTenant, db } from "../support/factories.ts";
import {
  DashboardClient,
  dashboardApp,
  type Fetcher,
  newWallet,
  ORIGIN,
  registerSecret,
  signedIn,
  siweSignIn,
} from "./dashboard-client.ts";

const HOUR = 60 * 60 * 1000;

async function linkToken(tenantId: string) {
  const link = await createSignInLink(db(), { tenant: tenantId, baseUrl: ORIGIN });
  const token = new URL(link.url).searchParams.get("token")!;
  registerSecret(`link token of ${tenantId}`, token);
  return { link, token };
}

describe("one-time sign-in links", () => {
  it("sign in once: the GET only shows a button, the POST signs in and sets a hardened session cookie", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const tenant = await createTenant({ name: "Link Tenant" });
    const { link, token } = await linkToken(tenant.id);
    expect(link.url).toBe(`${ORIGIN}/dashboard/sign-in/link?token=${token}`);
    expect(Date.parse(link.expiresAt) - clock.now()).toBe(10 * 60 * 1000);
    // Only the hash is stored.
    const stored = await env.DB.prepare("SELECT token_hash FROM sign_in_links WHERE tenant_id = ?").bind(tenant.id).all();
    expect(stored.results).toEqual([{ token_hash: await sha256Hex(token) }]);

    const client = new DashboardClient(app);
    // The page echoes the link's own token into its form (that is all it shows).
    const page = await client.get(`/dashboard/sign-in/link?token=${token}`, {}, true);
    expect(page.status).toBe(200);
    expect((await page.text()).match(/[0-9a-f]{64}/g)).toEqual([token]);
    expect(client.cookies.size).toBe(0);

    const res = await client.post("/dashboard/sign-in/link", { token });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/keys");
    const cookie = res.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^__Host-dashboard_session=[0-9a-f]{64}; /);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    // The session row holds the id's hash, not the id.
    const id = client.cookies.get("__Host-dashboard_session")!;
    const rows = await env.DB.prepare("SELECT id FROM dashboard_sessions WHERE tenant_id = ?").bind(tenant.id).all();
    expect(rows.results).toEqual([{ id: await sha256Hex(id) }]);

    const keys = await client.text("/dashboard/keys");
    expect(keys.status).toBe(200);
    expect(keys.html).toContain("Link Tenant");

    // Used: a second use signs nobody in.
    const again = new DashboardClient(app);
    const reuse = await again.post("/dashboard/sign-in/link", { token });
    expect(reuse.status).toBe(400);
    expect(await reuse.text()).toContain("expired (links last 10 minutes) or was already used");
    expect(again.cookies.size).toBe(0);
  });

  it("expires after 10 minutes; an unknown or malformed token is refused", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const tenant = await createTenant();
    const { token } = await linkToken(tenant.id);
    clock.advance(10 * 60 * 1000);
    const client = new DashboardClient(app);
    expect((await client.post("/dashboard/sign-in/link", { token })).status).toBe(400);
    expect((await client.post("/dashboard/sign-in/link", { token: "0".repeat(64) })).status).toBe(400);
    expect((await client.post("/dashboard/sign-in/link", { token: "x" })).status).toBe(400);
    expect(client.cookies.size).toBe(0);

    // One millisecond before expiry it still works.
    const fresh = await linkToken(tenant.id);
    clock.advance(10 * 60 * 1000 - 1);
    expect((await client.post("/dashboard/sign-in/link", { token: fresh.token })).status).toBe(303);
  });

  it("for an unknown tenant, no link is made", async () => {
    await expect(createSignInLink(db(), { tenant: "ten_missing", baseUrl: ORIGIN })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(createSignInLink(db(), { tenant: "ten_missing", baseUrl: "ftp://x" })).rejects.toMatchObject({
      code: "VALIDATION_ERROR",
    });
  });
});

describe("Sign-In with Ethereum", () => {
  it("signs in the tenant whose primary or tempo wallet signed (any letter case)", async () => {
    const app = dashboardApp();
    const primary = newWallet();
    const tempo = newWallet();
    const tenant = await createTenant({ walletAddress: primary.address.toLowerCase(), tempoWalletAddress: tempo.address });
    for (const wallet of [primary, tempo]) {
      const client = new DashboardClient(app);
      const { res, body, message } = await siweSignIn(client, wallet);
      expect(res.status).toBe(200);
      expect(body).toEqual({ location: "/dashboard/keys" });
      expect(message).toContain("dash.test wants you to sign in with your Ethereum account:");
      expect(message).toContain(`URI: ${ORIGIN}/dashboard`);
      expect(message).toContain("Chain ID: 8453");
      expect(message).toMatch(/Issued At: .*\nExpiration Time: /);
      expect((await client.text("/dashboard/keys")).html).toContain(tenant.name);
    }
  });

  it("a nonce is used once: replaying a signed message is refused", async () => {
    const app = dashboardApp();
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(app);
    const first = await siweSignIn(client, wallet);
    expect(first.res.status).toBe(200);
    const replay = new DashboardClient(app);
    const res = await replay.post("/dashboard/sign-in/siwe", { message: first.message, signature: first.signature });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "The sign-in request has expired or was already used; start again" });
    expect(replay.cookies.size).toBe(0);
  });

  it("the message expires after 5 minutes (and the nonce with it)", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(app);
    const issued = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "1" });
    const { message } = (await issued.json()) as { message: string };
    const signature = await wallet.signMessage({ message });
    clock.advance(5 * 60 * 1000);
    const res = await client.post("/dashboard/sign-in/siwe", { message, signature });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("The message has expired or is not valid");
    expect(client.cookies.size).toBe(0);
  });

  it("refuses a message for another domain, another URI, a nonce the server never issued, or an edited chain id", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(app);
    const issue = async () => {
      const res = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "8453" });
      const { message } = (await res.json()) as { message: string };
      return /Nonce: (\S+)/.exec(message)![1]!;
    };
    const base = {
      address: wallet.address,
      chainId: 8453,
      domain: "dash.test",
      uri: `${ORIGIN}/dashboard`,
      version: "1" as const,
      statement: "Sign in to the Paywall dashboard.",
      issuedAt: new Date(clock.now()),
      expirationTime: new Date(clock.now() + 5 * 60 * 1000),
    };
    const attempt = async (fields: Partial<typeof base> & { nonce: string }) => {
      const message = createSiweMessage({ ...base, ...fields });
      const res = await client.post("/dashboard/sign-in/siwe", { message, signature: await wallet.signMessage({ message }) });
      return { status: res.status, error: ((await res.json()) as { error?: string }).error };
    };
    expect(await attempt({ nonce: await issue(), domain: "evil.test" })).toEqual({
      status: 400,
      error: "The message is for another site (evil.test)",
    });
    expect(await attempt({ nonce: await issue(), uri: "https://evil.test/dashboard" })).toEqual({
      status: 400,
      error: "The message is for another address of this site",
    });
    expect(await attempt({ nonce: "abcdefgh12345678" })).toMatchObject({
      status: 400,
      error: expect.stringContaining("already used"),
    });
    expect(await attempt({ nonce: await issue(), chainId: 1 })).toMatchObject({
      status: 400,
      error: expect.stringContaining("already used"),
    });
    expect(await attempt({ nonce: await issue(), expirationTime: undefined as unknown as Date })).toMatchObject({ status: 400 });
    expect(client.cookies.size).toBe(0);
    // The genuine message still works.
    expect((await attempt({ nonce: await issue() })).status).toBe(200);
  });

  it("refuses a signature by another wallet than the message names", async () => {
    const app = dashboardApp();
    const owner = newWallet();
    const attacker = newWallet();
    await createTenant({ walletAddress: owner.address });
    const client = new DashboardClient(app);
    const issued = await client.post("/dashboard/sign-in/siwe/message", { address: owner.address, chainId: "8453" });
    const { message } = (await issued.json()) as { message: string };
    const res = await client.post("/dashboard/sign-in/siwe", { message, signature: await attacker.signMessage({ message }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "The signature is not from the message's wallet" });
    expect(client.cookies.size).toBe(0);
  });

  it("sign-up closed: a wallet of no tenant is refused, and nothing is created", async () => {
    const client = new DashboardClient(dashboardApp({ signup: "closed" }));
    const wallet = newWallet();
    const { res, body } = await siweSignIn(client, wallet);
    expect(res.status).toBe(403);
    expect(body.error).toContain("sign-up is closed here");
    expect(client.cookies.size).toBe(0);
    expect(await findTenantByWallet(db(), wallet.address)).toBeUndefined();
  });

  it("sign-up is closed by default (wrangler.toml), unless DASHBOARD_SIGNUP is open", async () => {
    expect(env.DASHBOARD_SIGNUP).toBe("closed");
    const { res } = await siweSignIn(new DashboardClient(dashboardApp()), newWallet());
    expect(res.status).toBe(403);
  });

  it("sign-up open: the wallet signs in, gives a name and an e-mail, and owns a new tenant with it as primary wallet", async () => {
    const client = new DashboardClient(dashboardApp({ signup: "open" }));
    const wallet = newWallet();
    const { res, body } = await siweSignIn(client, wallet);
    expect(res.status).toBe(200);
    expect(body).toEqual({ location: "/dashboard/sign-up" });
    // Until the form is sent, every page leads to it.
    expect((await client.text("/dashboard/keys")).location).toBe("/dashboard/sign-up");
    const form = await client.text("/dashboard/sign-up");
    expect(form.html).toContain(wallet.address);
    const bad = await client.post("/dashboard/sign-up", { name: "", email: "not-an-email" });
    expect(bad.status).toBe(400);
    const email = `${wallet.address.slice(2, 12).toLowerCase()}@signup.test`;
    const done = await client.post("/dashboard/sign-up", { name: "New Seller", email });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/dashboard/keys");
    const tenant = await findTenantByWallet(db(), wallet.address);
    expect(tenant).toMatchObject({ name: "New Seller", email, walletAddress: wallet.address, tempoWalletAddress: null });
    expect((await client.text("/dashboard/keys")).html).toContain("New Seller");
    // The next sign-in with that wallet is a plain sign-in.
    const again = await siweSignIn(new DashboardClient(dashboardApp({ signup: "open" })), wallet);
    expect(again.body).toEqual({ location: "/dashboard/keys" });
  });
});

describe("sessions", () => {
  it("idle out 12 hours after the last request", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const { client } = await signedIn(app);
    clock.advance(12 * HOUR - 60_000);
    expect((await client.text("/dashboard/keys")).status).toBe(200); // seen again: the idle timer restarts
    clock.advance(12 * HOUR - 1);
    expect((await client.text("/dashboard/keys")).status).toBe(200);
    clock.advance(12 * HOUR);
    const res = await client.text("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard/sign-in");
  });

  it("end 7 days after sign-in, however active", async () => {
    const clock = useTestClock();
    const app = dashboardApp();
    const { client } = await signedIn(app);
    for (let i = 0; i < 15; i++) {
      clock.advance(11 * HOUR);
      expect((await client.text("/dashboard/keys")).status, `after ${(i + 1) * 11} h`).toBe(200);
    }
    clock.advance(7 * 24 * HOUR - 15 * 11 * HOUR - 1);
    expect((await client.text("/dashboard/keys")).status).toBe(200);
    clock.advance(1);
    expect((await client.text("/dashboard/keys")).location).toBe("/dashboard/sign-in");
  });

  it("sign-out ends the session on the server: the old cookie no longer works", async () => {
    const app = dashboardApp();
    const { client } = await signedIn(app);
    const stolen = new Map(client.cookies);
    const res = await client.post("/dashboard/sign-out");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in?signed-out");
    expect(await (await client.get("/dashboard/sign-in?signed-out")).text()).toContain("You are signed out.");
    expect(client.cookies.size).toBe(0);
    const replay = new DashboardClient(app);
    for (const [k, v] of stolen) replay.cookies.set(k, v);
    expect((await replay.text("/dashboard/keys")).location).toBe("/dashboard/sign-in");
  });

  it("a made-up or malformed cookie is no session", async () => {
    const client = new DashboardClient(dashboardApp());
    client.cookies.set("__Host-dashboard_session", "a".repeat(64));
    expect((await client.text("/dashboard/keys")).location).toBe("/dashboard/sign-in");
    client.cookies.set("__Host-dashboard_session", "' OR 1=1 --");
    expect((await client.text("/dashboard/profile")).location).toBe("/dashboard/sign-in");
  });
});

/** SIWE nonce rows issued for a wallet (their binding names it). */
const noncesOf = async (address: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM siwe_nonces WHERE purpose LIKE ?")
      .bind(`%|${address.toLowerCase()}`)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("SIWE messages are what this server writes", () => {
  it.each(["0x2105", "08453", "8453.0", "8.453e3", " 8453", "+8453", "-1", "0", "9007199254740993", "", "base"])(
    "a chain id of %j is refused with 400, and no nonce is stored",
    async (chainId) => {
      const wallet = newWallet();
      await createTenant({ walletAddress: wallet.address });
      const client = new DashboardClient(dashboardApp());
      const res = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/chain id is not valid/);
      expect(await noncesOf(wallet.address)).toBe(0);
    },
  );

  it("a signed message whose Chain ID line is not canonical (08453 for 8453) is refused", async () => {
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(dashboardApp());
    const issued = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "8453" });
    const { message } = (await issued.json()) as { message: string };
    for (const spelled of ["08453", "0008453"]) {
      const edited = message.replace("\nChain ID: 8453\n", `\nChain ID: ${spelled}\n`);
      expect(edited).not.toBe(message);
      const res = await client.post("/dashboard/sign-in/siwe", {
        message: edited,
        signature: await wallet.signMessage({ message: edited }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/canonical/);
    }
    expect(client.cookies.size).toBe(0);
  });

  it("a message signed over another statement, or with fields the site did not write, is refused and signs nobody in", async () => {
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(dashboardApp());
    const edits: [string, (message: string) => string, RegExp][] = [
      [
        "another statement",
        (m) => m.replace("\nSign in to the Paywall dashboard.\n", "\nSend all my USDC to 0xdead.\n"),
        /statement is not the one/,
      ],
      ["no statement", (m) => m.replace("\nSign in to the Paywall dashboard.\n", ""), /statement is not the one/],
      ["resources", (m) => `${m}\nResources:\n- https://evil.test/`, /did not ask you to sign/],
      [
        "a request id",
        (m) => m.replace(/\nExpiration Time: (\S+)/, "\nExpiration Time: $1\nRequest ID: r1"),
        /did not ask you to sign/,
      ],
    ];
    for (const [what, edit, error] of edits) {
      const issued = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "8453" });
      const { message } = (await issued.json()) as { message: string };
      const edited = edit(message);
      expect(edited, what).not.toBe(message);
      // A real signature by the wallet (viem, a local key) over the edited text.
      const res = await client.post("/dashboard/sign-in/siwe", {
        message: edited,
        signature: await wallet.signMessage({ message: edited }),
      });
      expect(res.status, what).toBe(400);
      expect(((await res.json()) as { error: string }).error, what).toMatch(error);
    }
    expect(client.cookies.size).toBe(0);
    // The message as offered still signs in.
    expect((await siweSignIn(client, wallet)).res.status).toBe(200);
  });

  it("a signed message that claims to stay valid longer than a sign-in request lasts is refused", async () => {
    const app = dashboardApp();
    const wallet = newWallet();
    await createTenant({ walletAddress: wallet.address });
    const client = new DashboardClient(app);
    for (const extraMs of [1, 60 * 60 * 1000, 365 * 24 * 60 * 60 * 1000]) {
      const issued = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "8453" });
      const { message } = (await issued.json()) as { message: string };
      const expires = /\nExpiration Time: (\S+)/.exec(message)![1]!;
      const later = new Date(Date.parse(expires) + extraMs).toISOString();
      const edited = message.replace(`Expiration Time: ${expires}`, `Expiration Time: ${later}`);
      const res = await client.post("/dashboard/sign-in/siwe", {
        message: edited,
        signature: await wallet.signMessage({ message: edited }),
      });
      expect(res.status, later).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/longer than a sign-in request lasts/);
    }
    expect(client.cookies.size).toBe(0);
  });

  it("sign-up closed: a wallet of no tenant gets no nonce (no row), a tenant's wallet does", async () => {
    const client = new DashboardClient(dashboardApp({ signup: "closed" }));
    const stranger = newWallet();
    for (let i = 0; i < 5; i++) {
      const res = await client.post("/dashboard/sign-in/siwe/message", { address: stranger.address, chainId: "1" });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: string }).error).toContain("sign-up is closed here");
    }
    expect(await noncesOf(stranger.address)).toBe(0);
    const owner = newWallet();
    await createTenant({ walletAddress: owner.address });
    expect((await client.post("/dashboard/sign-in/siwe/message", { address: owner.address, chainId: "1" })).status).toBe(200);
    expect(await noncesOf(owner.address)).toBe(1);
  });
});

describe("what anyone can post before signing in is limited per client address", () => {
  const LIMIT = 3;
  /** The dashboard over the Worker's env with a small per-address limit. */
  const limited = (signup: "open" | "closed" = "open"): Fetcher => {
    const small = { ...env, IP_RATE_LIMIT_MAX: String(LIMIT) } as Env;
    const app = new Hono<{ Bindings: Env }>().route("/dashboard", createDashboard({ signup }));
    return { fetch: async (request) => app.fetch(request, small) };
  };
  let n = 0;
  const freshIp = () => `198.51.100.${(Date.now() + n++) % 250}`;

  const ENDPOINTS: [string, (w: ReturnType<typeof newWallet>) => Record<string, string>][] = [
    ["/dashboard/sign-in/siwe/message", (w) => ({ address: w.address, chainId: "1" })],
    ["/dashboard/sign-in/siwe", () => ({ message: "not a message", signature: `0x${"1".repeat(130)}` })],
    ["/dashboard/sign-in/link", () => ({ token: "0".repeat(64) })],
    ["/dashboard/sign-up", () => ({ name: "x", email: "x@example.com" })],
  ];

  it.each(ENDPOINTS)("POST %s: past the limit, 429 as a dashboard page with Retry-After", async (path, fields) => {
    const client = new DashboardClient(limited());
    const ip = `2001:db8:${(Date.now() % 0xffff).toString(16)}:${(n++).toString(16)}::1`;
    const wallet = newWallet();
    for (let i = 0; i < LIMIT; i++)
      expect((await client.post(path, fields(wallet), { ip })).status, `request ${i + 1}`).not.toBe(429);
    const res = await client.post(path, fields(wallet), { ip });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expect(await res.text()).toMatch(/Rate limit of 3 requests/);
    // Another address is not affected.
    expect((await client.post(path, fields(wallet), { ip: freshIp() })).status).not.toBe(429);
  });

  it("130 SIWE-message requests from one address store at most the limit's nonces", async () => {
    const client = new DashboardClient(limited());
    const ip = `2001:db8:ffff:${(n++).toString(16)}::7`;
    const wallet = newWallet();
    const statuses = new Map<number, number>();
    for (let i = 0; i < 130; i++) {
      const res = await client.post("/dashboard/sign-in/siwe/message", { address: wallet.address, chainId: "1" }, { ip });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: LIMIT, 429: 130 - LIMIT });
    expect(await noncesOf(wallet.address)).toBe(LIMIT);
  });
});

describe("the hourly cleanup", () => {
  it("deletes expired nonces, sign-in links (used or not) and sessions, and keeps the live ones", async () => {
    const now = Date.parse("2026-11-22T12:00:00Z");
    const tenant = await createTenant();
    const tag = crypto.randomUUID();
    const at = (ms: number) => now + ms;
    await env.DB.batch([
      env.DB.prepare("INSERT INTO siwe_nonces (nonce, purpose, created_at, expires_at) VALUES (?, ?, ?, ?)").bind(
        `${tag}a`,
        "p",
        at(-9e5),
        at(-1),
      ),
      env.DB.prepare("INSERT INTO siwe_nonces (nonce, purpose, created_at, expires_at) VALUES (?, ?, ?, ?)").bind(
        `${tag}b`,
        "p",
        at(-1),
        at(3e5),
      ),
      env.DB.prepare(
        "INSERT INTO sign_in_links (token_hash, tenant_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(`${tag}c`, tenant.id, at(-9e5), at(-1), null),
      env.DB.prepare(
        "INSERT INTO sign_in_links (token_hash, tenant_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(`${tag}d`, tenant.id, at(-9e5), at(0), at(-5e5)),
      env.DB.prepare(
        "INSERT INTO sign_in_links (token_hash, tenant_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(`${tag}e`, tenant.id, at(-1), at(6e5), null),
      env.DB.prepare(
        "INSERT INTO dashboard_sessions (id, tenant_id, signup_wallet, created_at, last_seen_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(`${tag}f`, tenant.id, null, at(-8e8), at(-8e8), at(-1), null),
      env.DB.prepare(
        "INSERT INTO dashboard_sessions (id, tenant_id, signup_wallet, created_at, last_seen_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(`${tag}g`, null, "0xabc", at(-1), at(-1), at(18e5), null),
      // Idle for 12 hours: it can no longer be used though its 7 days are not over.
      env.DB.prepare(
        "INSERT INTO dashboard_sessions (id, tenant_id, signup_wallet, created_at, last_seen_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(`${tag}h`, tenant.id, null, at(-5e7), at(-432e5), at(5e8), null),
    ]);
    await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "17 * * * *" }), env);
    const left = async (table: string, key: string) =>
      (
        await env.DB.prepare(`SELECT ${key} AS k FROM ${table} WHERE ${key} LIKE ? ORDER BY ${key}`)
          .bind(`${tag}%`)
          .all<{ k: string }>()
      ).results.map((r) => r.k.slice(-1));
    expect(await left("siwe_nonces", "nonce")).toEqual(["b"]);
    expect(await left("sign_in_links", "token_hash")).toEqual(["e"]);
    expect(await left("dashboard_sessions", "id")).toEqual(["g"]);
  });
});

describe("what a stranger learns", () => {
  it("sign-up with an e-mail in use answers exactly as with a fresh one: the account is created", async () => {
    const taken = await createTenant();
    const signUp = async (email: string) => {
      const client = new DashboardClient(dashboardApp({ signup: "open" }));
      const wallet = newWallet();
      expect((await siweSignIn(client, wallet)).res.status).toBe(200);
      const res = await client.post("/dashboard/sign-up", { name: "Stranger", email });
      return { res, wallet, keys: await client.get("/dashboard/keys") };
    };
    const fresh = await signUp(`fresh-${crypto.randomUUID()}@example.com`);
    const reused = await signUp(taken.email.toUpperCase());
    for (const { res, keys } of [fresh, reused]) {
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/dashboard/keys");
      expect(keys.status).toBe(200);
    }
    const owner = await findTenantByWallet(db(), reused.wallet.address);
    expect(owner).toMatchObject({ name: "Stranger", email: taken.email.toLowerCase() });
    expect(owner!.id).not.toBe(taken.id);
    // The first account is untouched, and the newcomer sees nothing of it.
    expect(await findTenantById(db(), taken.id)).toMatchObject({ name: taken.name, email: taken.email });
    expect(await reused.keys.text()).not.toContain(taken.name);
  });

  it("a sign-up left unfinished ends after 30 minutes; a finished one lives as long as any session", async () => {
    const clock = useTestClock();
    const app = dashboardApp({ signup: "open" });
    const idle = new DashboardClient(app);
    const done = new DashboardClient(app);
    expect((await siweSignIn(idle, newWallet())).res.status).toBe(200);
    expect((await siweSignIn(done, newWallet())).res.status).toBe(200);
    expect((await done.post("/dashboard/sign-up", { name: "Finished", email: "finished@example.com" })).status).toBe(303);
    clock.advance(29 * 60 * 1000);
    expect((await idle.get("/dashboard/sign-up")).status).toBe(200);
    clock.advance(2 * 60 * 1000);
    const expired = await idle.get("/dashboard/sign-up");
    expect(expired.status).toBe(303);
    expect(expired.headers.get("location")).toBe("/dashboard/sign-in");
    expect((await done.get("/dashboard/keys")).status).toBe(200);
  });

  it("the sign-in page shows customers no operator command", async () => {
    const page = await new DashboardClient(dashboardApp()).text("/dashboard/sign-in");
    expect(page.status).toBe(200);
    expect(page.html).not.toMatch(/npm run|admin --|dashboard-link|--tenant/);
    expect(page.html).toMatch(/sign-in link/i);
  });
});
