// `npm run webhooks:listen -- --key mpk_…`: receives the tenant's webhook deliveries on this machine during
// `npm run dev`, verifies each signature with the `standardwebhooks` library and prints the events.
//
// It registers an endpoint `http://localhost:<port>/webhooks` on the local API (or reuses one already there, rolling
// its secret to learn it), for every event type. Only `npm run dev` accepts such an endpoint (docs/webhooks.md).
// Options: --key (or KEY), --api (default http://localhost:8787), --port (default 4242).
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";

const { values } = parseArgs({
  options: { key: { type: "string" }, api: { type: "string" }, port: { type: "string" } },
});
const key = values.key ?? process.env.KEY;
const api = (values.api ?? process.env.API ?? "http://localhost:8787").replace(/\/+$/, "");
const port = Number(values.port ?? 4242);
if (!key) {
  process.stderr.write("Usage: npm run webhooks:listen -- --key mpk_… [--api http://localhost:8787] [--port 4242]\n");
  process.exit(2);
}
const url = `http://localhost:${port}/webhooks`;

/** A refusal or an unreachable API, told in one line (no stack): the listener cannot start without the API. */
class Refused extends Error {}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch(() => {
    throw new Refused(`cannot reach the API at ${api} (is npm run dev running? --api sets another address)`);
  });
  const json = (await res.json().catch(() => ({}))) as { data?: unknown; error?: string; code?: string };
  if (res.status === 401) throw new Refused(`the API refused the key (${json.code ?? res.status}: ${json.error ?? ""})`);
  if (!res.ok) throw new Refused(`${method} ${path} was refused (${res.status} ${json.code ?? ""}: ${json.error ?? ""})`);
  return json.data as Record<string, unknown>;
}

/** The endpoint for this URL and its secret: an existing one with its secret rolled, or a new one. */
async function register(): Promise<{ id: string; secret: string }> {
  const list = (await call("GET", "/v1/webhook-endpoints?limit=100")) as unknown as { id: string; url: string }[];
  const existing = list.find((e) => e.url === url);
  const events = ["transaction.completed", "transaction.failed", "transaction.pending"];
  if (existing) {
    await call("PATCH", `/v1/webhook-endpoints/${existing.id}`, { enabled: true, events });
    const rolled = await call("POST", `/v1/webhook-endpoints/${existing.id}/secret/roll`, { gracePeriodSeconds: 0 });
    return { id: existing.id, secret: rolled.secret as string };
  }
  const created = await call("POST", "/v1/webhook-endpoints", { url, events, description: "npm run webhooks:listen" });
  return { id: created.id as string, secret: created.secret as string };
}

const { id, secret } = await register().catch((err: unknown) => {
  if (!(err instanceof Refused)) throw err;
  process.stderr.write(`webhooks:listen: ${err.message}\n`);
  process.exit(1);
});
const webhook = new Webhook(secret);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    try {
      const event = webhook.verify(body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
      const d = event.data;
      const summary =
        event.type === "test"
          ? ""
          : ` ${d.id} ${d.status} ${d.amount} ${d.currency} on ${d.network}${d.txHash ? ` tx ${d.txHash}` : ""}`;
      process.stdout.write(
        `${event.timestamp} ${event.type}${summary} (webhook-id ${headers["webhook-id"]}, signature verified)\n`,
      );
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    } catch (err) {
      process.stdout.write(`Refused a delivery: ${err instanceof Error ? err.message : String(err)}\n`);
      res.writeHead(400, { "content-type": "text/plain" }).end("signature not verified");
    }
  });
});
server.listen(port, "localhost", () => {
  process.stdout.write(`Listening on ${url} for endpoint ${id}. Send a test event:\n`);
  process.stdout.write(`  curl -s -X POST ${api}/v1/webhook-endpoints/${id}/test -H "Authorization: Bearer $KEY"\n`);
});
process.on("SIGINT", () => server.close(() => process.exit(0)));
