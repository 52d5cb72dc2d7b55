// Route inventory (OWASP API9): every route the app serves is in /openapi.json, and every documented route is
// served. Checked twice: statically against the routes Hono registered, and through the Worker (a documented
// operation never reaches the not-found handler; an undocumented method on a documented path always does).
import { beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../src/api/app.ts";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";

interface Doc {
  paths: Record<string, Record<string, unknown>>;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * Served on purpose but not documented: the document itself. It is outside `/v1`, needs no key and is not part of
 * the API a client programs against. (Its reference page, /docs, is a static asset: test/browser/docs.test.ts.)
 */
const UNDOCUMENTED = ["GET /openapi.json"];

/** `/v1/services/{id}` → `/v1/services/:id` (Hono's spelling). */
const honoPath = (template: string) => template.replace(/\{([^}]+)\}/g, ":$1");

let doc: Doc;
let documented: string[];
let key: string;

beforeAll(async () => {
  const res = await api("/openapi.json");
  expect(res.status).toBe(200);
  doc = res.body;
  documented = Object.entries(doc.paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m.toUpperCase()))
        .map((m) => `${m.toUpperCase()} ${honoPath(path)}`),
    )
    .sort();
  ({ key } = await createApiKey());
});

/**
 * What Hono registered, deduplicated by method and path. Entries on a wildcard path (`*`, `/v1/*`) are middleware
 * (`app.use`, or `app.on([...methods], "/v1/*", …)`); a test below proves none of them answers a request itself.
 * Everything else is an endpoint, including an `ALL` entry on a concrete path.
 */
function registered() {
  const routes = createApi().routes;
  const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
  const wildcards = [...new Set(routes.filter((r) => r.path.endsWith("*")).map(key))].sort();
  const served = [...new Set(routes.filter((r) => !r.path.endsWith("*")).map(key))].sort();
  return { served, wildcards };
}

describe("static: the routes Hono registered", () => {
  it("middleware sits on wildcard paths only", () => {
    const { wildcards } = registered();
    expect(wildcards.length).toBeGreaterThan(0);
    expect(
      wildcards.every((w) => /^(ALL|GET|POST|PUT|PATCH|DELETE) (\/v1)?\/\*$/.test(w)),
      wildcards.join(", "),
    ).toBe(true);
  });

  it("every served route is documented (apart from the document and its reference page)", () => {
    const { served } = registered();
    expect(served.filter((r) => !documented.includes(r) && !UNDOCUMENTED.includes(r))).toEqual([]);
  });

  it("every documented route is served", () => {
    const { served } = registered();
    expect(documented.filter((r) => !served.includes(r))).toEqual([]);
  });

  it("the document is served and deliberately absent from itself", () => {
    const { served } = registered();
    for (const route of UNDOCUMENTED) {
      expect(served).toContain(route);
      expect(documented).not.toContain(route);
    }
    expect(documented.length).toBeGreaterThan(10);
    expect(documented.every((r) => r.split(" ")[1]?.startsWith("/v1/"))).toBe(true);
  });
});

describe("through the Worker", () => {
  /** The body of the app's not-found handler, learnt from a path nobody serves. */
  async function notFoundBody(): Promise<{ error: string; code: string }> {
    const res = await api("/v1/inventory-probe-nothing-here", { key });
    expect(res.status).toBe(404);
    return res.body as { error: string; code: string };
  }

  const concrete = (template: string) => template.replace(/\{[^}]+\}/g, "id_inventory_probe");

  it("every documented operation reaches its handler (never the not-found handler)", async () => {
    const missing = await notFoundBody();
    const reachedNotFound: string[] = [];
    for (const route of documented) {
      const [method, path] = route.split(" ") as [string, string];
      const body = method === "POST" || method === "PATCH" ? {} : undefined;
      const res = await api(concrete(path.replace(/:([a-zA-Z]+)/g, "{$1}")), { key, method, body });
      const text = res.text;
      if (res.status === 404 && text.includes(missing.error)) reachedNotFound.push(route);
    }
    expect(reachedNotFound).toEqual([]);
  });

  it("an undocumented method on a documented path is not served", async () => {
    const missing = await notFoundBody();
    const served: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const documentedMethods = Object.keys(item).map((m) => m.toUpperCase());
      // OPTIONS is answered on every path by the CORS policy (204, no data): test/foundation/request-order.test.ts.
      for (const method of METHODS.filter((m) => !documentedMethods.includes(m))) {
        const body = ["GET", "DELETE", "OPTIONS"].includes(method) ? undefined : {};
        const res = await api(concrete(path), { key, method, body });
        const text = res.text;
        if (!(res.status === 404 && text.includes(missing.error) && text.includes(missing.code))) {
          served.push(`${method} ${path} → ${res.status} ${text.slice(0, 120)}`);
        }
      }
    }
    expect(served).toEqual([]);
  });

  it("no wildcard entry answers by itself: a path under it that no route serves reaches the not-found handler", async () => {
    const missing = await notFoundBody();
    const answered: string[] = [];
    for (const entry of registered().wildcards) {
      const [method, pattern] = entry.split(" ") as [string, string];
      const path = pattern.replace("*", "inventory-probe-under-wildcard");
      for (const m of method === "ALL" ? METHODS : [method]) {
        const res = await api(path, { key, method: m, body: m === "GET" || m === "DELETE" ? undefined : {} });
        const text = res.text;
        if (!(res.status === 404 && text.includes(missing.error))) answered.push(`${m} ${path} → ${res.status}`);
      }
    }
    expect(answered).toEqual([]);
  });

  it("/openapi.json answers without a key", async () => {
    const json = await api("/openapi.json");
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
  });
});
