// Form bodies the dashboard cannot read, on every form post, signed in or not: a broken multipart body, a multipart
// type without its boundary, broken percent-encoding, another content type, a body over the limit (declared or
// streamed). Each is a 4xx dashboard page, never a 5xx, and changes nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_FORM_BYTES } from "../../src/dashboard/security.ts";
import { DashboardClient, dashboardApp, ORIGIN, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

/** Every form post of the dashboard (ids need not exist: the body is refused before any page looks at them). */
const POSTS = [
  "/dashboard/sign-in/siwe/message",
  "/dashboard/sign-in/siwe",
  "/dashboard/sign-in/link",
  "/dashboard/sign-up",
  "/dashboard/sign-out",
  "/dashboard/sessions/sign-out-everywhere",
  "/dashboard/keys",
  "/dashboard/keys/key_x/pause",
  "/dashboard/keys/key_x/resume",
  "/dashboard/keys/key_x/revoke",
  "/dashboard/keys/key_x/delete",
  "/dashboard/keys/key_x/roll",
  "/dashboard/keys/key_x/edit",
  "/dashboard/profile",
  "/dashboard/profile/wallet/message",
  "/dashboard/profile/wallet",
  "/dashboard/services",
  "/dashboard/services/svc_x/edit",
  "/dashboard/services/svc_x/delete",
  "/dashboard/services/paywalls/pw_x/enabled",
  "/dashboard/paywalls",
  "/dashboard/paywalls/pw_x/edit",
  "/dashboard/paywalls/pw_x/delete",
  "/dashboard/webhooks",
  "/dashboard/webhooks/whe_x/test",
  "/dashboard/webhooks/whe_x/deliveries/whd_x/retry",
  "/dashboard/webhooks/whe_x/enable",
  "/dashboard/webhooks/whe_x/disable",
  "/dashboard/webhooks/whe_x/delete",
];

const streamed = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(text);
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.slice(at, at + 64 * 1024));
      controller.close();
    },
  });

/** [what, content type, body, expected status] */
const BODIES: [string, string, () => BodyInit, number][] = [
  [
    "broken multipart",
    "multipart/form-data; boundary=xyz",
    () => '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nno end',
    400,
  ],
  ["multipart without a boundary", "multipart/form-data", () => "name=a", 400],
  ["broken percent-encoding", "application/x-www-form-urlencoded", () => "name=%E0%A4%A&url=%zz", 400],
  ["another content type", "text/plain", () => "name=a", 415],
  ["a declared body over the limit", "application/x-www-form-urlencoded", () => `name=${"a".repeat(MAX_FORM_BYTES)}`, 413],
  [
    "a streamed body over the limit",
    "application/x-www-form-urlencoded",
    () => streamed(`name=${"a".repeat(MAX_FORM_BYTES)}`),
    413,
  ],
];

const counts = async () =>
  env.DB.prepare(
    "SELECT (SELECT count(*) FROM api_keys) AS keys, (SELECT count(*) FROM services) AS services, (SELECT count(*) FROM tenants) AS tenants",
  ).first();

describe("form bodies the dashboard cannot read", () => {
  it("are refused with a 4xx dashboard page on every form post, signed in or not, and change nothing", {
    timeout: 60_000,
  }, async () => {
    const { client } = await signedIn(app);
    const clients = { "signed in": client, "signed out": new DashboardClient(app) };
    const before = await counts();
    const seen: string[] = [];
    for (const path of POSTS)
      for (const [who, c] of Object.entries(clients))
        for (const [what, type, body, expected] of BODIES) {
          const request = new Request(`${ORIGIN}${path}`, {
            method: "POST",
            headers: { "content-type": type, origin: ORIGIN },
            body: body(),
            redirect: "manual",
          });
          const res = await (c as unknown as { send(r: Request): Promise<Response> }).send(request);
          const html = await res.text();
          const line = `${path} ${who} ${what}: ${res.status}`;
          if (res.status !== expected) seen.push(line);
          expect(res.headers.get("content-type"), line).toMatch(/^text\/html/);
          expect(html, line).toContain('class="notice error"');
          expect(html, line).not.toMatch(/at \w+ \(|TypeError|boundary/);
        }
    expect(seen).toEqual([]);
    expect(await counts()).toEqual(before);
  });

  it("a well-formed multipart form is read as a urlencoded one is", async () => {
    const { client } = await signedIn(app);
    const body = new FormData();
    body.set("name", "multipart key");
    body.set("preset", "read-only");
    const res = await (client as unknown as { send(r: Request): Promise<Response> }).send(
      new Request(`${ORIGIN}/dashboard/keys`, { method: "POST", headers: { origin: ORIGIN }, body, redirect: "manual" }),
    );
    expect(res.status).toBe(303);
    expect(await (await client.get("/dashboard/keys")).text()).toContain("multipart key");
  });
});
