/**
 * A webhook receiver stand-in for the workerd suite, in Node (vitest.config.ts gives it to Miniflare as the Worker's
 * `outboundService`): the Worker's deliveries to `https://hooks.receiver.test/…` reach it under a public-looking name,
 * so the SSRF rules stay as deployed. Every other outbound host is unreachable (the Worker's `fetch` fails, as with
 * no network).
 *
 * - `POST /inbox/<name>` records the request (headers and body) and answers `200 ok`. Query:
 *   `fail=<n>`: the first n requests to the inbox are answered `500` with a text body; `redirect=1`: every request is
 *   answered `302` to `/inbox/<name>-redirected` (a receiver that follows it records there); `slow=<ms>`: the answer
 *   waits that long.
 * - `GET /inbox/<name>` answers the recorded requests as JSON: `[{ headers, body }]`, oldest first.
 */
export const RECEIVER_HOST = "hooks.receiver.test";

export interface ReceivedDelivery {
  headers: Record<string, string>;
  body: string;
}

/** The receiver: an answer for requests to `RECEIVER_HOST`, `null` for any other host. */
export function webhookReceiver() {
  const inboxes = new Map<string, ReceivedDelivery[]>();
  return async (request: Request): Promise<Response | null> => {
    const url = new URL(request.url);
    if (url.hostname !== RECEIVER_HOST) return null;
    const name = /^\/inbox\/([\w.-]+)$/.exec(url.pathname)?.[1];
    if (!name) return new Response("no such path", { status: 404 });
    if (request.method === "GET") {
      return Response.json(inboxes.get(name) ?? []);
    }
    const received = inboxes.get(name) ?? [];
    inboxes.set(name, received);
    received.push({ headers: Object.fromEntries(request.headers), body: await request.text() });
    const slow = Number(url.searchParams.get("slow") ?? 0);
    if (slow > 0) await new Promise((resolve) => setTimeout(resolve, slow));
    if (url.searchParams.get("redirect") === "1") {
      return new Response(null, { status: 302, headers: { location: `https://${RECEIVER_HOST}/inbox/${name}-redirected` } });
    }
    if (received.length <= Number(url.searchParams.get("fail") ?? 0)) {
      return new Response(`receiver failure ${received.length}\n${"x".repeat(400)}`, {
        status: 500,
        headers: { "content-type": "text/plain" },
      });
    }
    return new Response("ok", { status: 200, headers: { "content-type": "text/plain" } });
  };
}
