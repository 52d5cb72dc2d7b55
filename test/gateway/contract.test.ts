// What both payment standards promise a buyer, run once per standard against the local chains: a payment is used
// once (resent or sent many times at once), an upstream failure is never charged, and a settlement whose answer is
// lost is read from the chain, never answered with a new challenge. The protocol-specific details (challenges,
// refusals, the chain reads themselves) have their own files: x402.test.ts, mpp.test.ts, settlement-outcome.test.ts,
// mpp-settlement-outcome.test.ts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../localnet/mpp-buyer.ts";
import { send } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  net,
  openShop,
  type ShopOptions,
  settlementsOf,
  signedPayment,
  upstreamRequests,
} from "./support.ts";
import { mppShop, TEMPO_RPC, tempo, tempoBalanceOf } from "./tempo-support.ts";

/** A fault in front of the settling party: `answer-lost` settles and drops the answer; `send-dropped` settles nothing. */
type Fault = "answer-lost" | "send-dropped";

/** One payment, signed for a shop's current terms, and how to send it. */
interface SignedPayment {
  /** Sends it (again), optionally through a fault and from a client address with its own refusal limit. */
  send(options?: { fault?: Fault; client?: { ip: string; refusalLimit: number } }): Promise<Response>;
  /** Settlements of it the facilitator or chain made (x402: the facilitator's log; MPP: the recipient's balance). */
  settled(): Promise<number>;
}

interface Standard {
  name: "x402" | "MPP";
  /** The answer header that carries the settlement. */
  receipt: string;
  /** A shop taking this standard, the address it is paid to, and a payment for its current terms. */
  shop(
    options: ShopOptions,
  ): Promise<{ shop: Awaited<ReturnType<typeof openShop>>; payee: string; pay(): Promise<SignedPayment> }>;
  balanceOf(address: string): Promise<bigint>;
}

const clientHeaders = (client?: { ip: string }): Record<string, string> => (client ? { "CF-Connecting-IP": client.ip } : {});
const clientEnv = (client?: { refusalLimit: number }) => (client ? { PAYMENT_REFUSAL_LIMIT: String(client.refusalLimit) } : {});

const x402: Standard = {
  name: "x402",
  receipt: "PAYMENT-RESPONSE",
  balanceOf,
  async shop(options) {
    const shop = await openShop(options);
    return {
      shop,
      payee: shop.merchant,
      async pay() {
        const { header, nonce } = await signedPayment(shop.x402);
        return {
          send: ({ fault, client } = {}) =>
            send(new Request(shop.x402, { headers: { "PAYMENT-SIGNATURE": header, ...clientHeaders(client) } }), {
              ...GATEWAY_ENV,
              ...(fault ? { FACILITATOR_URL_TESTNET: FACILITATOR.replace("https://", `https://${fault}.`) } : {}),
              ...clientEnv(client),
            } as Partial<Env>),
          settled: async () => (await settlementsOf(nonce)).length,
        };
      },
    };
  },
};

let nextTempoBuyer = 0;
const mpp: Standard = {
  name: "MPP",
  receipt: "Payment-Receipt",
  balanceOf: tempoBalanceOf,
  async shop(options) {
    const shop = await mppShop(options);
    return {
      shop,
      payee: shop.recipient,
      async pay() {
        // A fresh funded account per payment (the local Tempo chain mines one expiring-nonce transaction per account).
        const account = tempo.buyers[nextTempoBuyer++];
        if (!account) throw new Error("out of funded Tempo buyers");
        const buyer = createMppBuyer({
          privateKey: account.privateKey,
          rpcUrl: TEMPO_RPC,
          chainId: tempo.chainId,
          fetch: gatewayFetch,
        });
        const credential = await buyer.mppx.createCredential(await gatewayFetch(shop.mpp));
        return {
          send: ({ fault, client } = {}) => {
            const overrides = fault
              ? {
                  NETWORK_OVERRIDES: JSON.stringify({
                    ...JSON.parse(net.networkOverrides),
                    "tempo-testnet": { rpcUrl: `https://${fault}.tempo-rpc.gateway.test` },
                  }),
                }
              : {};
            return send(new Request(shop.mpp, { headers: { Authorization: credential, ...clientHeaders(client) } }), {
              ...GATEWAY_ENV,
              ...overrides,
              ...clientEnv(client),
            } as Partial<Env>);
          },
          settled: async () => ((await tempoBalanceOf(shop.recipient)) > 0n ? 1 : 0),
        };
      },
    };
  },
};

describe.each([x402, mpp])("$name: the buyer's contract", (standard) => {
  describe("a payment is used once", () => {
    it("sent again after it completed: never forwarded again, never charged twice", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "2000" });
      const payment = await pay();
      expect((await payment.send()).status).toBe(200);
      const again = await payment.send();
      expect(again.status).toBe(402);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await payment.settled()).toBe(1);
      expect(await standard.balanceOf(payee)).toBe(2000n);
      expect((await history(shop)).transactions).toHaveLength(1);
    });

    it("sent many times at once: one upstream call, one settlement, one 200, and no new challenge while it is PENDING", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "3000", route: "/hang/300/echo" });
      const payment = await pay();
      const answers = await Promise.all(Array.from({ length: 6 }, () => payment.send()));
      // The others: while the first is in flight, 502 PAYMENT_OUTCOME_UNKNOWN; after it settled, the standard's 402.
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200 && s !== 402 && s !== 502)).toEqual([]);
      for (const r of answers.filter((r) => r.status === 502))
        expect(await r.json()).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await payment.settled()).toBe(1);
      expect(await standard.balanceOf(payee)).toBe(3000n);
    });
  });

  describe("an upstream failure is never charged", () => {
    it("a 5xx: the upstream's status and body, FAILED with the reason, an ERROR event, nothing settled, logged as the upstream's", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "4000", route: "/status/503" });
      const payment = await pay();
      const output = consoleOutput();
      const res = await payment.send();
      expect(res.status).toBe(503);
      // The access log names the upstream's failure (a warning), never our own 500 (an error line).
      const logged = (level: "error" | "warn") => output.at(level).filter((l) => l.includes('"status":503'));
      expect(logged("error")).toEqual([]);
      expect(logged("warn").map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ status: 503, error: "UPSTREAM_ERROR" }),
      ]);
      expect(res.headers.get(standard.receipt)).toBeNull();
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await payment.settled()).toBe(0);
      expect(await standard.balanceOf(payee)).toBe(0n);
      const { transactions, events } = await history(shop);
      expect(transactions[0]).toMatchObject({ status: "FAILED", failureReason: "upstream answered 503", txHash: null });
      expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ statusCode: 503 });
    });

    it("a timeout: 504 in the error envelope, FAILED, nothing settled", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "5000", route: "/hang/3000/echo" });
      await env.DB.prepare("UPDATE paywalls SET timeout = 500 WHERE id = ?").bind(shop.paywallId).run();
      const payment = await pay();
      const res = await payment.send();
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ code: "GATEWAY_TIMEOUT", meta: { requestId: expect.any(String) } });
      expect(await payment.settled()).toBe(0);
      expect(await standard.balanceOf(payee)).toBe(0n);
      const { transactions, events } = await history(shop);
      expect(transactions[0]).toMatchObject({ status: "FAILED", failureReason: "upstream timed out after 500 ms" });
      expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ statusCode: 504 });
    });
  });

  describe("a settlement whose answer is lost is read from the chain", () => {
    it("it was made: the buyer gets the upstream's answer with the standard's receipt, COMPLETED", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "6000" });
      const payment = await pay();
      const res = await payment.send({ fault: "answer-lost" });
      expect(res.status).toBe(200);
      expect(res.headers.get(standard.receipt)).not.toBeNull();
      expect(await standard.balanceOf(payee)).toBe(6000n);
      expect((await history(shop)).transactions[0]).toMatchObject({ status: "COMPLETED", txHash: expect.stringMatching(/^0x/) });
    });

    it("it was not made: 502 PAYMENT_OUTCOME_UNKNOWN, PENDING; sent again, the same 502, never a challenge or a refused attempt", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "7000" });
      const payment = await pay();
      // An address allowed one refused attempt: resends of an unsettled payment are not refusals (never a 429).
      const client = { ip: "198.51.100.251", refusalLimit: 1 };
      const first = await payment.send({ fault: "send-dropped", client });
      expect(first.status).toBe(502);
      const { details } = (await first.json()) as { details: { transactionId: string } };
      for (let i = 0; i < 3; i++) {
        const again = await payment.send({ fault: "send-dropped", client });
        expect(again.status).toBe(502);
        expect(again.headers.get("www-authenticate")).toBeNull();
        expect(again.headers.get("payment-required")).toBeNull();
        expect(await again.json()).toMatchObject({
          code: "PAYMENT_OUTCOME_UNKNOWN",
          details: { transactionId: details.transactionId },
        });
      }
      const { transactions, events } = await history(shop);
      expect(transactions).toEqual([expect.objectContaining({ id: details.transactionId, status: "PENDING" })]);
      expect(events.map((e) => e.eventType)).toEqual(["REQUEST"]);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await standard.balanceOf(payee)).toBe(0n);
    });
  });
});
