// The services and paywalls pages compressed for clients that accept gzip: the page is compressed once per catalog
// state and each answer's `meta` appended to the same gzip member, so the answer decodes to exactly the JSON the
// client would get uncompressed (its own request id), under the weak form of the page's tag. Without gzip in
// Accept-Encoding the answer is the identity, byte for byte as before.
import { describe, expect, it } from "vitest";
import { buildRequest, read, send } from "../support/client.ts";
import { type Actor, actor, createPaywall, createService, routePaywallBody } from "../support/resources.ts";

const LIST_TAG = /^"l[0-9a-f]{32}"$/;

/** The app's own Response (no HTTP in between, so nothing decodes it): its headers and its bytes as sent. */
async function raw(who: Actor, path: string, headers: Record<string, string>) {
  const res = await send(buildRequest(path, { key: who.key, headers }), {});
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const gunzip = (bytes: Uint8Array) =>
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();

/** The answer without what is new on every answer. */
const stable = (text: string) => {
  const body = JSON.parse(text);
  expect(body.meta.requestId).toMatch(/^req_/);
  return { ...body, meta: { ...body.meta, requestId: "-", timestamp: "-" } };
};

async function catalog() {
  const who = await actor();
  for (let i = 0; i < 3; i++) {
    const service = await createService(who);
    await createPaywall(who, routePaywallBody(service.id));
  }
  return who;
}

describe("catalog pages compressed for clients that accept gzip", () => {
  it.each(["/v1/services?limit=20", "/v1/paywalls?limit=100"])(
    "%s: gzip decodes to the identity answer, smaller, under the weak tag; a 304 for either tag",
    async (path) => {
      const who = await catalog();
      const plain = await raw(who, path, {});
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(plain.headers.get("vary")).toBe("Accept-Encoding");
      const tag = plain.headers.get("etag") as string;
      expect(tag).toMatch(LIST_TAG);

      for (const accept of ["gzip, deflate, br", "br;q=1, gzip;q=0.8", "*"]) {
        const gz = await raw(who, path, { "accept-encoding": accept });
        expect(gz.status).toBe(200);
        expect(gz.headers.get("content-encoding")).toBe("gzip");
        expect(gz.headers.get("vary")).toBe("Accept-Encoding");
        expect(gz.headers.get("content-type")).toBe("application/json");
        expect(gz.headers.get("etag")).toBe(`W/${tag}`);
        expect([...gz.bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
        expect(gz.bytes.length).toBeLessThan(plain.bytes.length);
        const text = await gunzip(gz.bytes);
        expect(stable(text)).toEqual(stable(new TextDecoder().decode(plain.bytes)));
        // Once kept, the same page is answered from the kept bytes: still the same JSON, its own request id.
        const again = await gunzip((await raw(who, path, { "accept-encoding": accept })).bytes);
        expect(JSON.parse(again).meta.requestId).not.toBe(JSON.parse(text).meta.requestId);
        expect(stable(again)).toEqual(stable(text));
      }
      for (const [accept, held] of [
        ["gzip", `W/${tag}`],
        ["gzip", tag],
        [undefined, `W/${tag}`],
      ] as const) {
        const headers: Record<string, string> = { "if-none-match": held, ...(accept ? { "accept-encoding": accept } : {}) };
        const res = await raw(who, path, headers);
        expect(res.status).toBe(304);
        expect(res.bytes.length).toBe(0);
      }
    },
  );

  it.each([undefined, "identity", "gzip;q=0", "br, deflate"])("Accept-Encoding %j: the identity answer", async (accept) => {
    const who = await catalog();
    const res = await raw(who, "/v1/services", accept === undefined ? {} : { "accept-encoding": accept });
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("etag")).toMatch(LIST_TAG);
    expect(JSON.parse(new TextDecoder().decode(res.bytes)).data).toHaveLength(3);
  });

  it("follows the client's own Accept-Encoding where the edge normalized the request's (cf.clientAcceptEncoding)", async () => {
    const who = await catalog();
    const withCf = (clientSent: string) => {
      const request = buildRequest("/v1/services", { key: who.key, headers: { "accept-encoding": "br, gzip" } });
      return new Request(request, { cf: { clientAcceptEncoding: clientSent } });
    };
    for (const [clientSent, encoding] of [
      ["", null],
      ["identity", null],
      ["gzip, deflate", "gzip"],
    ] as const) {
      const res = await send(withCf(clientSent), {});
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding"), JSON.stringify(clientSent)).toBe(encoding);
      await res.arrayBuffer();
    }
  });

  it("names both what it varies on when a browser origin is allowed: Accept-Encoding and Origin", async () => {
    const who = await catalog();
    const origin = "https://app.example";
    for (const headers of [{ origin }, { origin, "accept-encoding": "gzip" }, {}] as Record<string, string>[]) {
      const res = await send(buildRequest("/v1/services", { key: who.key, headers }), { CORS_ALLOWED_ORIGINS: origin });
      expect(res.status).toBe(200);
      expect(res.headers.get("vary")?.split(/,\s*/).sort()).toEqual(["Accept-Encoding", "Origin"]);
      await res.arrayBuffer();
    }
  });

  it("through the Worker's fetch handler the runtime decodes it as any client would: the page as stored now", async () => {
    const who = await catalog();
    const path = "/v1/services?limit=20";
    const first = await read(await send(buildRequest(path, { key: who.key, headers: { "accept-encoding": "gzip" } })));
    expect(first.headers.get("content-encoding")).toBe("gzip");
    expect(first.body.data).toHaveLength(3);
    await createService(who);
    const after = await read(await send(buildRequest(path, { key: who.key, headers: { "accept-encoding": "gzip" } })));
    expect(after.body.data).toHaveLength(4);
    expect(after.body.meta.pagination.total).toBe(4);
    expect(after.headers.get("etag")).not.toBe(first.headers.get("etag"));
  });
});
