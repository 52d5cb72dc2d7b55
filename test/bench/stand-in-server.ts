// The paid request's external systems, standing in as one tiny HTTP server on 127.0.0.1, in its own process (so its
// answers never wait behind the load generator's event loop): an x402 facilitator that accepts every payment at once
// (`/verify`, `/settle`, `/supported`, the shapes of @x402/core's VerifyResponse / SettleResponse / SupportedResponse)
// and an upstream answering 200 with a small JSON. The Worker reaches it through Miniflare's outbound service (an
// `external` server: workerd connects directly, no Node hop), by host name: the SSRF rules stay as deployed.
//
// Every call is logged with the payment's nonce and the server's own time (request handler entered → response
// ended, on the monotonic clock both processes share): the runner reads the log (`GET /__log` on the server's own origin) to subtract the
// stand-ins' time from the gateway's latency and to place each request's phases between the calls.
//
// Run: `node test/bench/stand-in-server.ts <port>` (stand-ins.ts starts it); prints `{"port":N}` once listening.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { StandInCall, StandInEntry } from "./overhead.ts";
import { clockMs, STAND_IN_HOSTS } from "./stand-ins.ts";

/** The CAIP-2 network the stand-in facilitator supports (base-sepolia: the bench paywall's x402 network). */
const NETWORK = "eip155:84532";

interface FacilitatorRequest {
  paymentPayload?: {
    payload?: {
      authorization?: { from?: string; nonce?: string };
      // A session deposit (x402 `batch-settlement`): its channel and the amount it deposits.
      type?: string;
      channelConfig?: { payer?: string };
      voucher?: { channelId?: string };
      deposit?: { amount?: string };
    };
  };
  paymentRequirements?: { network?: string };
}

/**
 * A session deposit's answers as `@x402/evm`'s batch-settlement facilitator gives them for a new channel: `/verify`
 * with the channel's state before the deposit in `extra`, `/settle` with the deposited amount and the state after it
 * in `extra.channelState`. The transaction hash is derived from the channel id (one deposit per channel in the bench).
 */
function depositAnswer(path: string, body: FacilitatorRequest, network: string) {
  const p = body.paymentPayload?.payload;
  const channelId = p?.voucher?.channelId ?? "";
  const payer = p?.channelConfig?.payer ?? "";
  const amount = p?.deposit?.amount ?? "0";
  const state = (balance: string) => ({ channelId, balance, totalClaimed: "0", withdrawRequestedAt: 0, refundNonce: "0" });
  if (path.endsWith("/verify")) return { isValid: true, payer, extra: state("0") };
  return { success: true, transaction: channelId, network, payer, amount, extra: { channelState: state(amount) } };
}

function serve(port: number) {
  const log: StandInEntry[] = [];
  const server = createServer((req, res) => {
    const entered = clockMs();
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stand-in");
      const json = (status: number, body: unknown, call?: StandInCall, nonce?: string) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
        if (call) log.push({ call, nonce: nonce ?? "", in: entered, out: clockMs() });
      };
      if (host === STAND_IN_HOSTS.upstream) {
        return json(200, { data: { quote: "42.00", currency: "USD" } }, "upstream", url.searchParams.get("n") ?? "");
      }
      if (host === STAND_IN_HOSTS.facilitator) {
        if (url.pathname.endsWith("/supported")) {
          const kinds = ["exact", "batch-settlement"].map((scheme) => ({ x402Version: 2, scheme, network: NETWORK }));
          return json(200, { kinds, extensions: [], signers: {} });
        }
        let body: FacilitatorRequest = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as FacilitatorRequest;
        } catch {
          return json(400, { error: "invalid JSON" });
        }
        const authorization = body.paymentPayload?.payload?.authorization;
        const payer = authorization?.from ?? "";
        const nonce = authorization?.nonce ?? "";
        const network = body.paymentRequirements?.network ?? NETWORK;
        if (body.paymentPayload?.payload?.type === "deposit") {
          const call = url.pathname.endsWith("/verify") ? "verify" : url.pathname.endsWith("/settle") ? "settle" : undefined;
          if (!call) return json(404, { error: "unknown facilitator path" });
          return json(200, depositAnswer(url.pathname, body, network), call, body.paymentPayload.payload.voucher?.channelId);
        }
        if (url.pathname.endsWith("/verify")) return json(200, { isValid: true, payer }, "verify", nonce);
        if (url.pathname.endsWith("/settle")) {
          // The nonce is 32 random-looking bytes, unique per payment: a well-formed transaction hash.
          return json(200, { success: true, transaction: nonce, network, payer }, "settle", nonce);
        }
        return json(404, { error: "unknown facilitator path" });
      }
      // The server's own origin: the runner's control calls.
      if (url.pathname === "/__log") return json(200, log.splice(0, log.length));
      return json(404, { error: `unknown host ${host}` }, "other");
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  // The runner's exit (or its kill) ends this process too.
  process.on("disconnect", () => process.exit(0));
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}

serve(Number(process.argv[2] ?? 0));
