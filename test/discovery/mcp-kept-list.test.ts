// A plain `tools/list` answered from the SDK's own answer, kept by the service's state and the headers the SDK's
// transport checked (docs/mcp.md, "Speed"): the same bytes as the SDK's answer with the request's own id, never a
// stale list after a paywall changes, every header still checked and every protocol version still negotiated, and
// concurrent requests with the same JSON-RPC id each get their own answer.
import { describe, expect, it } from "vitest";
import { checkedHeaders, keepList, keptAnswer, plainListId } from "../../src/gateway/mcp/kept-list.ts";
import { api, send } from "../support/client.ts";
import { actor, createPaywall, createService, routePaywallBody } from "../support/resources.ts";

const PAY = "https://pay.example.com";
const HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are read field by field
  body: any;
}

async function post(serviceId: string, message: object, headers: Record<string, string | undefined> = {}) {
  const sent = Object.fromEntries(Object.entries({ ...HEADERS, ...headers }).filter(([, v]) => v !== undefined));
  const res = await send(
    new Request(`${PAY}/api/mcp/${serviceId}`, {
      method: "POST",
      headers: sent as Record<string, string>,
      body: JSON.stringify(message),
    }),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined } as Answer;
}

const list = (id: string | number, extra: object = {}) => ({ jsonrpc: "2.0", id, method: "tools/list", ...extra });
const names = (answer: Answer) => (answer.body.result.tools as { name: string }[]).map((t) => t.name);

async function setup(slugs = ["forecast", "reports"]) {
  const who = await actor();
  const svc = await createService(who, { publicRoutes: ["/v1/status"] });
  const paywalls = [];
  for (const slug of slugs) paywalls.push(await createPaywall(who, routePaywallBody(svc.id, { slug, allowedMethods: ["GET"] })));
  return { who, svc, paywalls };
}

/** The headers every answer of the payment origin has, less those that differ per request. */
const stableHeaders = (headers: Headers) => [...headers].filter(([name]) => !/request-id|date|server-timing/i.test(name));

describe("a plain tools/list answered from the SDK's own answer", () => {
  it("is byte for byte the SDK's answer, with the request's own id", async () => {
    const { svc } = await setup();
    const first = await post(svc.id, list("first")); // the SDK answers, and its answer is kept
    expect(first.status).toBe(200);
    for (const id of [42, "first", 'é "quoted" \u2028 id', 0, -7]) {
      const kept = await post(svc.id, list(id));
      // The SDK answers every list with params (here an empty object, which changes nothing in its answer).
      const sdk = await post(svc.id, list(id, { params: {} }));
      expect(kept.text).toBe(sdk.text);
      expect(kept.status).toBe(sdk.status);
      expect(stableHeaders(kept.headers)).toEqual(stableHeaders(sdk.headers));
      expect(kept.body.id).toBe(id);
    }
    expect(names(first)).toEqual(["forecast", "reports", "FREE_v1_status"]);
  });

  it("never answers a stale list: a paywall disabled, enabled again, repriced shows at once", async () => {
    const { who, svc, paywalls } = await setup();
    const forecast = paywalls[0]!;
    for (let i = 0; i < 2; i++) expect(names(await post(svc.id, list(i)))).toContain("forecast");
    const off = await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { enabled: false } });
    expect(off.status, off.text).toBe(200);
    for (let i = 0; i < 2; i++) expect(names(await post(svc.id, list(i)))).not.toContain("forecast");
    await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { enabled: true } });
    for (let i = 0; i < 2; i++) expect(names(await post(svc.id, list(i)))).toContain("forecast");
    const priced = await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { price: "1230000" } });
    expect(priced.status, priced.text).toBe(200);
    for (let i = 0; i < 2; i++) {
      const tool = (await post(svc.id, list(i))).body.result.tools.find((t: { name: string }) => t.name === "forecast");
      expect(tool.description).toContain("1.23 USD per call");
    }
  });

  it("still checks every header and negotiates every protocol version after a list was kept", async () => {
    const { svc } = await setup();
    for (let i = 0; i < 2; i++) expect((await post(svc.id, list(i))).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      // Another supported version, and none (the transport assumes 2025-03-26): the same tools.
      for (const version of ["2025-06-18", "2025-03-26", undefined]) {
        const other = await post(svc.id, list(i), { "MCP-Protocol-Version": version });
        expect({ version, status: other.status }).toEqual({ version, status: 200 });
        expect(names(other)).toEqual(["forecast", "reports", "FREE_v1_status"]);
      }
      const refusals: [Record<string, string>, number][] = [
        [{ "MCP-Protocol-Version": "1999-01-01" }, 400],
        [{ Accept: "application/json" }, 406],
        [{ "Content-Type": "text/plain" }, 415],
      ];
      for (const [headers, status] of refusals) {
        const refused = await post(svc.id, list(i), headers);
        expect({ headers, status: refused.status }).toEqual({ headers, status });
        expect(refused.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
      }
      const init = (protocolVersion: string) =>
        post(svc.id, {
          jsonrpc: "2.0",
          id: i,
          method: "initialize",
          params: { protocolVersion, capabilities: {}, clientInfo: { name: "test", version: "1" } },
        });
      expect((await init("2025-06-18")).body.result.protocolVersion).toBe("2025-06-18");
      expect((await init("2030-01-01")).body.result.protocolVersion).toBe("2025-11-25"); // the server's newest
    }
  });

  it("gives concurrent requests with the same JSON-RPC id their own answers", async () => {
    const a = await setup(["alpha", "beta"]);
    const b = await setup(["gamma"]);
    await Promise.all([post(a.svc.id, list(1)), post(b.svc.id, list(1))]); // kept for both
    const fresh = await setup(["delta"]); // never listed: its first lists reach the SDK at once
    const requests: [string, Promise<Answer>, (answer: Answer) => void][] = [];
    const expectTools = (tools: string[]) => (answer: Answer) => expect(names(answer)).toEqual(tools);
    for (let n = 0; n < 4; n++) {
      requests.push(["list a", post(a.svc.id, list(1)), expectTools(["alpha", "beta", "FREE_v1_status"])]);
      requests.push(["list b", post(b.svc.id, list(1)), expectTools(["gamma", "FREE_v1_status"])]);
      requests.push(["list fresh", post(fresh.svc.id, list(1)), expectTools(["delta", "FREE_v1_status"])]);
    }
    requests.push([
      "list b, 2025-06-18",
      post(b.svc.id, list(1), { "MCP-Protocol-Version": "2025-06-18" }),
      expectTools(["gamma", "FREE_v1_status"]),
    ]);
    requests.push([
      "list a with params",
      post(a.svc.id, list(1, { params: {} })),
      expectTools(["alpha", "beta", "FREE_v1_status"]),
    ]);
    requests.push([
      "unknown tool",
      post(a.svc.id, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "gamma", arguments: {} } }),
      (answer) =>
        expect(answer.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool: gamma") }),
    ]);
    requests.push([
      "ping",
      post(b.svc.id, { jsonrpc: "2.0", id: 1, method: "ping" }),
      (answer) => expect(answer.body.result).toEqual({}),
    ]);
    const answers = await Promise.all(requests.map(([, answer]) => answer));
    answers.forEach((answer, i) => {
      const [what, , check] = requests[i]!;
      expect({ what, status: answer.status, id: answer.body?.id }).toEqual({ what, status: 200, id: 1 });
      check(answer);
    });
  });
});

describe("kept-list.ts", () => {
  it("plainListId: only jsonrpc, an id the SDK takes and method tools/list", () => {
    expect(plainListId(list(1))).toBe(1);
    expect(plainListId(list("x"))).toBe("x");
    expect(plainListId(list(1, { params: {} }))).toBeUndefined();
    expect(plainListId(list(1, { params: { cursor: "c" } }))).toBeUndefined();
    expect(plainListId(list(1, { extra: true }))).toBeUndefined();
    expect(plainListId({ ...list(1), jsonrpc: "1.0" })).toBeUndefined();
    expect(plainListId({ ...list(1), method: "tools/call" })).toBeUndefined();
    for (const id of [1.5, null, undefined, {}, 2 ** 60]) expect(plainListId(list(id as never))).toBeUndefined();
    for (const message of [[list(1)], null, "tools/list", 1]) expect(plainListId(message)).toBeUndefined();
  });

  it("checkedHeaders: Accept, Content-Type and the protocol version, an absent one apart from an empty one", () => {
    const of = (init: Record<string, string>) => checkedHeaders(new Headers(init));
    expect(of({ accept: "a", "content-type": "b", "mcp-protocol-version": "c", "x-other": "d" })).toBe(
      of({ accept: "a", "content-type": "b", "mcp-protocol-version": "c" }),
    );
    expect(of({ accept: "a", "content-type": "b" })).not.toBe(
      of({ accept: "a", "content-type": "b", "mcp-protocol-version": "" }),
    );
  });

  it("keepList keeps only a 200 result written as the SDK writes it, and keptAnswer puts the id back", async () => {
    const headers = new Headers({ "content-type": "application/json" });
    const body = '{"result":{"tools":[]},"jsonrpc":"2.0","id":"a"}';
    const kept = keepList(200, headers, body, "a");
    expect(kept).toBeDefined();
    const plain = new Request("https://pay.example.com/api/mcp/svc", { method: "POST" });
    expect(await keptAnswer(kept!, 7, plain).text()).toBe('{"result":{"tools":[]},"jsonrpc":"2.0","id":7}');
    expect(keepList(400, headers, body, "a")).toBeUndefined();
    expect(keepList(200, headers, body, "b")).toBeUndefined();
    expect(keepList(200, headers, '{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}', "a")).toBeUndefined();
    expect(keepList(200, headers, '{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}', "a")).toBeUndefined();
  });

  it("keptAnswer sends a client that accepts gzip the same answer compressed, its id in the same gzip member", async () => {
    const tools = Array.from({ length: 50 }, (_, i) => ({ name: `tool${i}`, description: "é ".repeat(40) }));
    const body = `{"result":${JSON.stringify({ tools })},"jsonrpc":"2.0","id":1}`;
    const kept = keepList(200, new Headers({ "content-type": "application/json" }), body, 1)!;
    const gzipped = new Request("https://pay.example.com/api/mcp/svc", {
      method: "POST",
      headers: { "Accept-Encoding": "gzip, deflate, br" },
    });
    const res = keptAnswer(kept, "req-2", gzipped);
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const sent = new Uint8Array(await res.arrayBuffer());
    expect(sent.byteLength).toBeLessThan(body.length / 4);
    const text = await new Response(new Blob([sent]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    expect(text).toBe(body.replace('"id":1}', '"id":"req-2"}'));
  });
});
