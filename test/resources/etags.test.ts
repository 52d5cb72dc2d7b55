// ETag / If-Match / If-None-Match on services and paywalls: tags change with every change, a stale tag changes
// nothing, and the check is part of the write, so N concurrent writes with one tag give exactly one success.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ApiResult, api } from "../support/client.ts";
import {
  type Actor,
  actor,
  createPaywall,
  createService,
  expectError,
  proxyPaywallBody,
  rawRow,
  routePaywallBody,
  serviceBody,
} from "../support/resources.ts";

const STRONG_TAG = /^"v[1-9][0-9]*"$/;
const etag = (r: ApiResult) => r.headers.get("etag") as string;
const statuses = (results: ApiResult[]) => results.map((r) => r.status).sort();

async function get(who: Actor, path: string, headers: Record<string, string> = {}) {
  return api(path, { key: who.key, headers });
}

/** No binding replaced: the request goes to the app in this isolate, headers exactly as built. */
const IN_PROCESS = {};

describe.each([
  { kind: "service", path: "/v1/services", table: "services" as const },
  { kind: "paywall", path: "/v1/paywalls", table: "paywalls" as const },
])("$kind ETags", ({ kind, path, table }) => {
  async function create(who: Actor) {
    const res = await api(path, {
      key: who.key,
      method: "POST",
      body: kind === "service" ? serviceBody() : proxyPaywallBody(),
    });
    expect(res.status, res.text).toBe(201);
    return res;
  }
  const rename = (who: Actor, id: string, name: string, ifMatch?: string) =>
    api(`${path}/${id}`, {
      key: who.key,
      method: "PATCH",
      body: { name },
      headers: ifMatch === undefined ? {} : { "if-match": ifMatch },
    });

  it("POST, GET and PATCH return a strong ETag that changes on every change and stays while nothing changes", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const tags = [etag(created)];
    expect(tags[0]).toMatch(STRONG_TAG);
    const read = await get(who, `${path}/${id}`);
    expect(etag(read)).toBe(tags[0]);
    for (const name of ["one", "two", "two"]) {
      const res = await rename(who, id, name);
      expect(res.status, res.text).toBe(200);
      expect(etag(res)).toMatch(STRONG_TAG);
      expect(tags).not.toContain(etag(res));
      tags.push(etag(res));
      expect(etag(await get(who, `${path}/${id}`))).toBe(etag(res));
    }
    // The tag is the row's stored version.
    expect((await rawRow(table, id))?.version).toBe(4);
  });

  it("If-Match with the current tag writes; a stale tag is 412 PRECONDITION_FAILED and changes nothing", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const first = etag(created);
    const ok = await rename(who, id, "fresh", first);
    expect(ok.status, ok.text).toBe(200);
    const before = await rawRow(table, id);

    const stale = await rename(who, id, "stale", first);
    expectError(stale, 412, "PRECONDITION_FAILED");
    expect(stale.body.details).toEqual([{ path: "", message: `The current ETag is ${etag(ok)}` }]);
    expect(etag(stale)).toBe(etag(ok));
    expect(await rawRow(table, id)).toEqual(before);

    for (const bad of ['W/"v2"', "v2", '"nope"', '"v999"']) {
      const res = await rename(who, id, "junk", bad);
      expectError(res, 412, "PRECONDITION_FAILED");
    }
    expect(await rawRow(table, id)).toEqual(before);

    // A list naming the current tag, and *, match.
    expect((await rename(who, id, "listed", `"v999", ${etag(ok)}`)).status).toBe(200);
    expect((await rename(who, id, "any", "*")).status).toBe(200);
  });

  it("an empty If-Match that reaches the Worker is 412 like any malformed tag, on PATCH and DELETE", async () => {
    // Sent to the app in this isolate: workerd drops an empty standard header on the way in (HTTP and bindings alike).
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    for (const header of ["", " ", ","]) {
      const call = (method: string, body?: unknown) =>
        api(`${path}/${id}`, { key: who.key, method, body, headers: { "if-match": header }, env: IN_PROCESS });
      const patched = await call("PATCH", { name: "changed" });
      expectError(patched, 412, "PRECONDITION_FAILED");
      expect(patched.headers.get("etag")).toBe(etag(created));
      expectError(await call("DELETE"), 412, "PRECONDITION_FAILED");
    }
    expect(etag(await get(who, `${path}/${id}`))).toBe(etag(created));
  });

  it("DELETE with a stale If-Match is 412 and the row stays; with the current tag it deletes", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const ok = await rename(who, id, "moved on");
    const stale = await api(`${path}/${id}`, { key: who.key, method: "DELETE", headers: { "if-match": etag(created) } });
    expectError(stale, 412, "PRECONDITION_FAILED");
    expect(await rawRow(table, id)).not.toBeNull();
    const gone = await api(`${path}/${id}`, { key: who.key, method: "DELETE", headers: { "if-match": etag(ok) } });
    expect(gone.status, gone.text).toBe(200);
    expect(await rawRow(table, id)).toBeNull();
  });

  it("GET with If-None-Match of the current tag is 304 without a body; an old tag gets the full 200", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const hit = await get(who, `${path}/${id}`, { "if-none-match": etag(created) });
    expect(hit.status).toBe(304);
    expect(hit.text).toBe("");
    expect(etag(hit)).toBe(etag(created));
    const changed = await rename(who, id, "changed");
    const miss = await get(who, `${path}/${id}`, { "if-none-match": etag(created) });
    expect(miss.status).toBe(200);
    expect(etag(miss)).toBe(etag(changed));
    expect(miss.body.data.name).toBe("changed");
  });

  it("another tenant's If-Match or If-None-Match learns nothing: 403 as without the header", async () => {
    const owner = await actor();
    const other = await actor();
    const created = await create(owner);
    const id = created.body.data.id;
    expectError(await get(other, `${path}/${id}`, { "if-none-match": etag(created) }), 403, "FORBIDDEN");
    expectError(await rename(other, id, "x", etag(created)), 403, "FORBIDDEN");
    expectError(await rename(other, id, "x", '"v999"'), 403, "FORBIDDEN");
  });

  it("a race of 8 concurrent PATCHes with one tag → exactly one 200 and seven 412; the winner is what is stored", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const tag = etag(created);
    const race = await Promise.all(Array.from({ length: 8 }, (_, i) => rename(who, id, `racer ${i}`, tag)));
    expect(statuses(race)).toEqual([200, ...Array(7).fill(412)]);
    for (const r of race.filter((r) => r.status === 412)) expectError(r, 412, "PRECONDITION_FAILED");
    const winner = race.find((r) => r.status === 200) as ApiResult;
    const stored = await rawRow(table, id);
    expect(stored?.name).toBe(winner.body.data.name);
    expect(stored?.version).toBe(2);
  });

  it("a race of 8 concurrent DELETEs and PATCHes with one tag → exactly one succeeds", async () => {
    const who = await actor();
    const created = await create(who);
    const id = created.body.data.id;
    const tag = etag(created);
    const race = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? rename(who, id, `racer ${i}`, tag)
          : api(`${path}/${id}`, { key: who.key, method: "DELETE", headers: { "if-match": tag } }),
      ),
    );
    expect(race.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of race.filter((r) => r.status !== 200)) expect([412, 404]).toContain(r.status);
  });
});

describe("a service's ETag covers its embedded paywalls", () => {
  it("creating, changing, moving and deleting one of its paywalls changes the service's tag", async () => {
    const who = await actor();
    const a = await createService(who);
    const b = await createService(who);
    const tagOf = async (id: string) => etag(await get(who, `/v1/services/${id}`));
    let tagA = await tagOf(a.id);
    const fresh = async () => {
      const next = await tagOf(a.id);
      expect(next).not.toBe(tagA);
      tagA = next;
    };
    const p = await createPaywall(who, routePaywallBody(a.id));
    await fresh();
    expect((await api(`/v1/paywalls/${p.id}`, { key: who.key, method: "PATCH", body: { price: "2500" } })).status).toBe(200);
    await fresh();
    const tagB = await tagOf(b.id);
    expect((await api(`/v1/paywalls/${p.id}`, { key: who.key, method: "PATCH", body: { serviceId: b.id } })).status).toBe(200);
    await fresh();
    expect(await tagOf(b.id)).not.toBe(tagB);
    const q = await createPaywall(who, routePaywallBody(a.id));
    await fresh();
    expect((await api(`/v1/paywalls/${q.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    await fresh();
  });

  it("a stale service tag after a paywall change is refused: the service is not changed", async () => {
    const who = await actor();
    const s = await createService(who);
    const tag = etag(await get(who, `/v1/services/${s.id}`));
    await createPaywall(who, routePaywallBody(s.id));
    const before = await env.DB.prepare("SELECT * FROM services WHERE id = ?").bind(s.id).first();
    const res = await api(`/v1/services/${s.id}`, {
      key: who.key,
      method: "PATCH",
      body: { name: "late" },
      headers: { "if-match": tag },
    });
    expectError(res, 412, "PRECONDITION_FAILED");
    expect(await env.DB.prepare("SELECT * FROM services WHERE id = ?").bind(s.id).first()).toEqual(before);
  });
});

describe("conditional headers, fuzzed", () => {
  // An independent oracle: the header matches when it is `*` or one of its comma-separated parts is the current tag.
  // An empty one never reaches the Worker: workerd drops a standard header with an empty value (If-Match, Range,
  // Authorization, …) from every request it receives, so it is no condition here (the Worker refuses it when it does
  // arrive: see "an empty If-Match" above).
  const matches = (header: string, tag: string) =>
    header.trim() === "" ||
    header.trim() === "*" ||
    header
      .split(",")
      .map((part) => part.trim())
      .includes(tag);
  const headerValue = fc
    .array(
      fc.oneof(
        // {cur} and {old} stand for the current and the previous version, filled in when the request is sent.
        fc.constantFrom('"v{cur}"', '"v{old}"', 'W/"v{cur}"', "*", '"v0{cur}"', '"{cur}"', "v{cur}", '"V{cur}"', '""', ",", " "),
        fc.string({ unit: fc.constantFrom(...'v12W/"*, x'), maxLength: 12 }),
      ),
      { maxLength: 4 },
    )
    .map((parts) => parts.join(fc.sample(fc.constantFrom(",", ", ", " "), 1)[0]));

  const fill = (template: string, tag: string) => {
    const current = Number(tag.slice(2, -1));
    return template.replaceAll("{cur}", String(current)).replaceAll("{old}", String(current - 1));
  };

  it("any If-Match on PATCH is 200 when it names the current tag (or is *) and 412 otherwise, never anything else", async () => {
    const who = await actor();
    const s = await createService(who);
    await fc.assert(
      fc.asyncProperty(headerValue, async (template) => {
        const tag = etag(await get(who, `/v1/services/${s.id}`));
        const header = fill(template, tag);
        const before = await rawRow("services", s.id);
        const res = await api(`/v1/services/${s.id}`, {
          key: who.key,
          method: "PATCH",
          body: { name: "fuzzed" },
          headers: { "if-match": header },
        });
        if (matches(header, tag)) {
          expect(res.status, `${header} vs ${tag}: ${res.text}`).toBe(200);
        } else {
          expectError(res, 412, "PRECONDITION_FAILED");
          expect(await rawRow("services", s.id)).toEqual(before);
        }
      }),
      { numRuns: 40 },
    );
  }, 30_000);

  it("any If-None-Match on GET is 304 (empty) when it names the current tag, weakly or not, or is *; else 200", async () => {
    const who = await actor();
    const s = await createService(who);
    const tag = etag(await get(who, `/v1/services/${s.id}`));
    await fc.assert(
      fc.asyncProperty(headerValue, async (template) => {
        const header = fill(template, tag);
        const res = await get(who, `/v1/services/${s.id}`, { "if-none-match": header });
        const weakly = header.trim() !== "" && matches(header.replaceAll('W/"', '"'), tag);
        expect(res.status, `${header} vs ${tag}`).toBe(weakly ? 304 : 200);
        expect(etag(res)).toBe(tag);
      }),
      { numRuns: 40 },
    );
  }, 30_000);
});
