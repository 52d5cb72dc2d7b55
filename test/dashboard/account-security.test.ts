// Account security in workerd with real D1: the list of active sessions (browser, address, how each signed in),
// "Sign out everywhere" ending every one of them, and the signed-out notice.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { sha256Hex } from "../../src/lib/ids.ts";
import { db } from "../support/factories.ts";
import { DashboardClient, dashboardApp, ORIGIN, registerSecret, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

const CHROME_MAC =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/** A second browser of the same tenant, signed in with a link from another address and browser. */
async function secondBrowser(tenantId: string) {
  const client = new DashboardClient(app);
  const link = await createSignInLink(db(), { tenant: tenantId, baseUrl: ORIGIN });
  const token = new URL(link.url).searchParams.get("token")!;
  registerSecret("second browser's link token", token);
  const res = await client.post(
    "/dashboard/sign-in/link",
    { token },
    { ip: "203.0.113.77", headers: { "user-agent": CHROME_MAC } },
  );
  expect(res.status).toBe(303);
  registerSecret("second browser's session hash", await sha256Hex(client.cookies.get("__Host-dashboard_session")!));
  return client;
}

describe("sessions", () => {
  it("lists every active session with its browser and address, and marks this one", async () => {
    const { client, tenant } = await signedIn(app);
    await secondBrowser(tenant.id);
    const page = await client.text("/dashboard/activity");
    expect(page.html).toContain("Chrome 131 on macOS");
    expect(page.html).toContain("from 203.0.113.77");
    expect(page.html.match(/this browser/g)).toHaveLength(1);
    // The sign-in is in the activity with its browser.
    expect(page.html).toContain("one-time link · Chrome 131 on macOS");
  });

  it("Sign out everywhere ends every session of the tenant (and only its), and says so", async () => {
    const { client, tenant } = await signedIn(app);
    const other = await secondBrowser(tenant.id);
    const bystander = await signedIn(app);
    const res = await client.post("/dashboard/sessions/sign-out-everywhere");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in?signed-out=everywhere");
    expect((await client.text("/dashboard/keys")).location).toBe("/dashboard/sign-in");
    expect((await other.text("/dashboard/keys")).location).toBe("/dashboard/sign-in");
    expect((await bystander.client.text("/dashboard/keys")).status).toBe(200);
    const notice = await new DashboardClient(app).text("/dashboard/sign-in?signed-out=everywhere");
    expect(notice.html).toContain("You are signed out on every device and browser.");
    const live = await env.DB.prepare("SELECT count(*) AS n FROM dashboard_sessions WHERE tenant_id = ? AND revoked_at IS NULL")
      .bind(tenant.id)
      .first<{ n: number }>();
    expect(live!.n).toBe(0);
    const events = (
      await env.DB.prepare("SELECT action FROM account_events WHERE tenant_id = ? ORDER BY created_at, rowid")
        .bind(tenant.id)
        .all()
    ).results.map((r) => r.action);
    expect(events).toEqual(["signed-in", "signed-in", "signed-out-everywhere"]);
  });

  it("a cross-site Sign out everywhere is refused and ends nothing", async () => {
    const { client } = await signedIn(app);
    const res = await client.post("/dashboard/sessions/sign-out-everywhere", {}, { origin: "https://evil.test" });
    expect(res.status).toBe(403);
    expect((await client.text("/dashboard/keys")).status).toBe(200);
  });
});
