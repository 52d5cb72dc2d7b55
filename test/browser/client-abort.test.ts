// A client that disconnects mid-upload, over a real socket to the production bundle in workerd: the request is
// logged as a client abort (499), with no 500 and no error-level line.
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;

beforeAll(async () => {
  worker = await startWorker({ port: 8843 });
});

afterAll(async () => {
  await worker?.stop();
});

/** Sends the start of a chunked JSON body, then drops the connection. */
function abortMidUpload(path: string, headers: Record<string, string>, origin = worker.url): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${origin}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "transfer-encoding": "chunked" },
    });
    req.on("error", () => resolve());
    req.on("close", () => resolve());
    req.write('{"name":"Weather API","description":"');
    setTimeout(() => req.destroy(), 300);
  });
}

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
};

it("an authenticated upload cut off mid-way is logged as 499 CLIENT_ABORTED, never as a server error", async () => {
  await abortMidUpload("/v1/services", { authorization: `Bearer ${worker.key}` });
  await until(() => worker.accessLog().some((l) => l.path === "/v1/services"));
  const lines = worker.accessLog().filter((l) => l.path === "/v1/services");
  expect(lines).toEqual([expect.objectContaining({ method: "POST", status: 499, error: "CLIENT_ABORTED" })]);
  expect(worker.logs.filter((l) => l.level === "error")).toEqual([]);
});

it("an unauthenticated upload cut off mid-way is a plain 401: its body was never read", async () => {
  await abortMidUpload("/v1/paywalls", {});
  await until(() => worker.accessLog().some((l) => l.path === "/v1/paywalls"));
  expect(worker.accessLog().filter((l) => l.path === "/v1/paywalls")).toEqual([
    expect.objectContaining({ status: 401, error: "INVALID_API_KEY" }),
  ]);
  expect(worker.logs.filter((l) => l.level === "error")).toEqual([]);
});

it("a buyer's upload to a payment URL cut off mid-way is logged as 499 CLIENT_ABORTED, never as a server error", async () => {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${worker.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${worker.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { data: { id: string; paymentUrls: { mpp: string } } }).data;
  };
  const networks = ["tempo-testnet"];
  const service = await call("/v1/services", {
    name: "Abort",
    baseUrl: "https://api.example.com",
    authMethod: "none",
    networks,
    mode: "testnet",
  });
  const paywall = await call("/v1/paywalls", {
    slug: "abort",
    name: "Abort",
    targetType: "ROUTE",
    targetRoute: "/x",
    serviceId: service.id,
    price: "1000",
    currency: "USDC",
    networks,
    fulfillmentMode: "PROXY",
  });
  const path = new URL(paywall.paymentUrls.mpp).pathname;
  // An MPP credential (any: it is checked after the body is read) makes the gateway read the buyer's body.
  await abortMidUpload(path, { authorization: "Payment eyJ4IjoxfQ" }, worker.paymentUrl);
  await until(() => worker.accessLog().some((l) => l.path === path));
  expect(worker.accessLog().filter((l) => l.path === path)).toEqual([
    expect.objectContaining({ method: "POST", status: 499, error: "CLIENT_ABORTED" }),
  ]);
  expect(worker.logs.filter((l) => l.level === "error")).toEqual([]);
});
