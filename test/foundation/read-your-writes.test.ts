// Reads through D1's Sessions API (read replication): every answer carries `X-D1-Bookmark`; a read sent with it reads
// at least that state, so a client reads its own writes even where a replica lags. The lagging replica is a stand-in
// binding (test/support/fake-bindings.ts laggingReplicaD1): locally D1 has one copy, and every session reads it.
import { describe, expect, it } from "vitest";
import { type ApiResult, api } from "../support/client.ts";
import { laggingReplicaD1 } from "../support/fake-bindings.ts";
import { actor, expectInvalid, serviceBody } from "../support/resources.ts";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const bookmarkOf = (res: ApiResult) => res.headers.get("x-d1-bookmark") as string;

describe("read your writes through D1 sessions", () => {
  it("a read sent with the bookmark of a write sees the write, where a read without one may not", async () => {
    const who = await actor();
    const { db, constraints } = laggingReplicaD1();
    const env = { DB: db };
    const created = await api("/v1/services", { key: who.key, method: "POST", body: serviceBody(), env });
    expect(created.status, created.text).toBe(201);
    const written = bookmarkOf(created);
    expect(written).toMatch(BOOKMARK);
    const id = created.body.data.id;
    const path = `/v1/services/${id}`;

    const own = await api(path, { key: who.key, headers: { "x-d1-bookmark": written }, env });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data.name).toBe(created.body.data.name);
    const list = await api("/v1/services", { key: who.key, headers: { "x-d1-bookmark": written }, env });
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([id]);
    // The answer's bookmark is at least the one sent: the next request can carry it on.
    expect(bookmarkOf(own) >= written).toBe(true);

    // A change, then a read with the change's bookmark: the new state, never the one before.
    const renamed = await api(path, { key: who.key, method: "PATCH", body: { name: "Renamed" }, env });
    expect(renamed.status).toBe(200);
    expect(bookmarkOf(renamed) > written).toBe(true);
    const after = await api(path, { key: who.key, headers: { "x-d1-bookmark": bookmarkOf(renamed) }, env });
    expect(after.body.data.name).toBe("Renamed");

    // Without a bookmark, a read may be answered by a replica that has not seen the write yet.
    expect((await api(path, { key: who.key, env })).status).toBe(404);
    // Writes start at the primary; reads at the bookmark they were sent.
    expect(constraints).toEqual(["first-primary", written, written, "first-primary", bookmarkOf(renamed), "first-unconstrained"]);
  });

  it("every answer of the API carries the bookmark of its session, never older than one it was sent", async () => {
    const who = await actor();
    const created = await api("/v1/services", { key: who.key, method: "POST", body: serviceBody() });
    const written = bookmarkOf(created);
    expect(written).toMatch(BOOKMARK);
    for (const path of ["/v1/me", "/v1/services", `/v1/services/${created.body.data.id}`, "/v1/paywalls", "/v1/events"]) {
      const res = await api(path, { key: who.key, headers: { "x-d1-bookmark": written } });
      expect(res.status, path).toBe(200);
      if (path === "/v1/me") continue; // answered by the key's object alone: no D1 statement, no bookmark to give
      expect(bookmarkOf(res) >= written, path).toBe(true);
    }
  });

  it("a bookmark that is not one D1 gave is refused with 400 VALIDATION_ERROR, before anything is read", async () => {
    const who = await actor();
    for (const bad of ["", "first-primary", "not-a-bookmark", "0000000c-00000004-00004fd8", `${"0".repeat(8)}-x`]) {
      const res = await api("/v1/services", { key: who.key, headers: { "x-d1-bookmark": bad } });
      expectInvalid(res, "X-D1-Bookmark");
    }
  });
});
