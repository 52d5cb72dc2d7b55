// `requireScope` over HTTP, on a small app built from the real middleware (the resource routes that use it are
// being added: TODO(lead) — once /v1/services and /v1/paywalls exist, run the route × scope matrix against them).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { renderError } from "../../src/error-handler.ts";
import { ApiError } from "../../src/errors.ts";
import { SCOPES, type Scope } from "../../src/lib/scopes.ts";
import { authenticate, requireScope } from "../../src/middleware/auth.ts";
import { database } from "../../src/middleware/database.ts";
import { requestId } from "../../src/middleware/request-id.ts";
import { rateLimit } from "../../src/rate-limit/middleware.ts";
import { createRouter } from "../../src/router.ts";
import { createApiKey } from "../support/factories.ts";
import { buildRequest, quietLogs, readJson } from "../support/harness.ts";

beforeEach(() => {
  vi.restoreAllMocks();
  quietLogs();
});

function scopedApp() {
  const app = createRouter();
  app.use("*", requestId(), database(), authenticate(), rateLimit());
  for (const scope of SCOPES) app.get(`/needs/${scope}`, requireScope(scope), (c) => c.json({ ok: true, scope }));
  app.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such endpoint"), c));
  app.onError(renderError);
  return app;
}

const app = scopedApp();

async function get(path: string, key: string) {
  const ctx = createExecutionContext();
  const res = await app.fetch(buildRequest(path, { key }), env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: await readJson(res) };
}

/** From the spec: the scopes each scope satisfies (write implies read of the same resource). */
const SATISFIES: Record<Scope, Scope[]> = {
  "services:read": ["services:read"],
  "services:write": ["services:write", "services:read"],
  "paywalls:read": ["paywalls:read"],
  "paywalls:write": ["paywalls:write", "paywalls:read"],
  "transactions:read": ["transactions:read"],
  "events:read": ["events:read"],
};

describe("requireScope", () => {
  it.each(SCOPES)("a key holding only %s passes exactly the scopes it grants", async (granted) => {
    const { key } = await createApiKey({ scopes: [granted] });
    for (const required of SCOPES) {
      const { status, body } = await get(`/needs/${required}`, key);
      if (SATISFIES[granted].includes(required)) {
        expect({ required, status }).toEqual({ required, status: 200 });
      } else {
        expect({ required, status, code: body.code }).toEqual({ required, status: 403, code: "INSUFFICIENT_SCOPE" });
        expect(body.details).toEqual({ required, granted: [granted] });
        expect(body.error).toContain(required);
        expect(body.meta.requestId).toMatch(/^req_/);
      }
    }
  });

  it("a key with every scope passes every check", async () => {
    const { key } = await createApiKey({ scopes: [...SCOPES] });
    for (const required of SCOPES) expect((await get(`/needs/${required}`, key)).status).toBe(200);
  });

  it("a key with both write scopes still lacks transactions:read and events:read", async () => {
    const { key } = await createApiKey({ scopes: ["services:write", "paywalls:write"] });
    expect((await get("/needs/transactions:read", key)).body.code).toBe("INSUFFICIENT_SCOPE");
    expect((await get("/needs/events:read", key)).body.code).toBe("INSUFFICIENT_SCOPE");
    expect((await get("/needs/paywalls:read", key)).status).toBe(200);
  });

  it("authentication comes before the scope check: a revoked key gets KEY_REVOKED, not INSUFFICIENT_SCOPE", async () => {
    const { key } = await createApiKey({ scopes: ["events:read"], status: "revoked" });
    expect((await get("/needs/services:write", key)).body.code).toBe("KEY_REVOKED");
  });
});
