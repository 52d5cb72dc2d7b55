// What both payment standards promise a buyer, run once per standard against the local chains: a payment is charged
// once and answered every time it is presented (resent later, or sent many times at once: the same answer, byte for
// byte, never a second charge or upstream call, never a refusal), and never for another request; an upstream failure
// is never charged; a settlement whose answer is lost is read from the chain, never answered with a new challenge,
// and once the sweep finds it paid, the buyer's resend gets the answer it paid for (never one whose payment FAILED).
// The protocol-specific details (challenges, refusals, the chain reads themselves, x402's payment-identifier) have
// their own files: x402.test.ts, mpp.test.ts, settlement-outcome.test.ts, mpp-settlement-outcome.test.ts, once.test.ts.
import { env } from "cloudflare:workers";
import { Credential } from "mppx";
import { Webhook } from "standardwebhooks";
import { sendRawTransactionSync } from "viem/actions";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { SWEEP_MIN_AGE_MS, sweepPendingPayments } from "../../src/gateway/sweep.ts";
import { api, send } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createEndpoint, inboxUrl, newInbox, received } from "../webhooks/support.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  net,
  openShop,
  paidAnswerRow,
  type ShopOptions,
  sealedText,
  settlementsOf,
  signedPayment,
  upstreamRequests,
  verificationsOf,
} from "./support.ts";
import { mppShop, TEMPO_RPC, tempo, tempoBalanceOf, tempoClient } from "./tempo-support.ts";

/** A fault in front of the settling party: `answer-lost` settles and drops the answer; `send-dropped` settles nothing. */
type Fault = "answer-lost" | "send-dropped";

/** One payment, signed for a shop's current terms, and how to send it. */
interface SignedPayment {
  /**
   * Sends it (again), optionally through a fault, from a client address with its own refusal limit, to another URL,
   * or for another query.
   */
  send(options?: {
    fault?: Fault;
    client?: { ip: string; refusalLimit: number };
    url?: string;
    query?: string;
    /** `"d1"`: recorded by the D1 ledger, as payments recorded before the objects (the Cron sweep settles those). */
    ledger?: "d1";
  }): Promise<Response>;
  /** Settlements of it the facilitator or chain made (x402: the facilitator's log; MPP: the recipient's balance). */
  settled(): Promise<number>;
  /** Checks of it by the standard's verifier (x402: the facilitator's `/verify` calls; MPP: none are counted). */
  verified(): Promise<number | undefined>;
  /** Settles it outside the gateway, as its settling party does after the gateway lost the answer. */
  settleOutside(): Promise<void>;
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
  /** The shop's payment URL for this standard. */
  url(shop: Awaited<ReturnType<typeof openShop>>): string;
  /** A credential header that is not a payment. */
  notAPayment: Record<string, string>;
}

const clientHeaders = (client?: { ip: string }): Record<string, string> => (client ? { "CF-Connecting-IP": client.ip } : {});
const clientEnv = (client?: { refusalLimit: number }) => (client ? { PAYMENT_REFUSAL_LIMIT: String(client.refusalLimit) } : {});

const x402: Standard = {
  name: "x402",
  receipt: "PAYMENT-RESPONSE",
  balanceOf,
  url: (shop) => shop.x402,
  notAPayment: { "PAYMENT-SIGNATURE": "not-a-payment" },
  async shop(options) {
    const shop = await openShop(options);
    return {
      shop,
      payee: shop.merchant,
      async pay() {
        const { header, nonce, payload } = await signedPayment(shop.x402);
        return {
          send: ({ fault, client, url, query, ledger } = {}) =>
            send(
              new Request(`${url ?? shop.x402}${query ?? ""}`, {
                headers: { "PAYMENT-SIGNATURE": header, ...clientHeaders(client) },
              }),
              {
                ...GATEWAY_ENV,
                ...(fault ? { FACILITATOR_URL_TESTNET: FACILITATOR.replace("https://", `https://${fault}.`) } : {}),
                ...clientEnv(client),
                ...(ledger ? { PAYMENT_RECORDS: ledger } : {}),
              } as Partial<Env>,
            ),
          settled: async () => (await settlementsOf(nonce)).length,
          verified: () => verificationsOf(nonce),
          async settleOutside() {
            const res = await fetch(`${FACILITATOR}/settle`, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted }),
            });
            expect(((await res.json()) as { success: boolean }).success).toBe(true);
          },
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
  url: (shop) => shop.mpp as string,
  notAPayment: { Authorization: "Payment not-a-credential" },
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
          send: ({ fault, client, url, query, ledger } = {}) => {
            const overrides = fault
              ? {
                  NETWORK_OVERRIDES: JSON.stringify({
                    ...JSON.parse(net.networkOverrides),
                    "tempo-testnet": { rpcUrl: `https://${fault}.tempo-rpc.gateway.test` },
                  }),
                }
              : {};
            return send(
              new Request(`${url ?? shop.mpp}${query ?? ""}`, {
                headers: { Authorization: credential, ...clientHeaders(client) },
              }),
              {
                ...GATEWAY_ENV,
                ...overrides,
                ...clientEnv(client),
                ...(ledger ? { PAYMENT_RECORDS: ledger } : {}),
              } as Partial<Env>,
            );
          },
          settled: async () => ((await tempoBalanceOf(shop.recipient)) > 0n ? 1 : 0),
          verified: async () => undefined,
          async settleOutside() {
            const signed = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
            await sendRawTransactionSync(tempoClient, { serializedTransaction: signed });
          },
        };
      },
    };
  },
};

/** A response read whole: status, body bytes (as text) and headers. */
async function answerOf(res: Response) {
  return { status: res.status, body: await res.text(), headers: Object.fromEntries(res.headers) };
}

/** The headers a buyer is given with a paid answer, without those every answer gets afresh (request id, date). */
const paidHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !["x-request-id", "date"].includes(name)));

/** The Cron sweep as it runs a few minutes later (`later` ms past the minimum age). */
/** The paid answer as stored where the payment is recorded: its tenant and its sealed text. */
async function storedAnswer(transactionId: string) {
  if (env.PAYMENT_RECORDS !== "objects") return paidAnswerRow(transactionId);
  const known = await env.PAYMENT_COORDINATOR.getByName(transactionId).known(new Date(0));
  return known && { tenant_id: known.row.tenantId, answer: known.row.answer };
}

const sweepLater = (later = 1_000) =>
  sweepPendingPayments({ ...env, ...GATEWAY_ENV } as Env, new Date(Date.now() + SWEEP_MIN_AGE_MS + later));

describe.each([x402, mpp])("$name: the buyer's contract", (standard) => {
  it("the access log: a plain challenge is not written; a refused payment, an unknown paywall and a payment are", async () => {
    const { shop, pay } = await standard.shop({ price: "1500" });
    const payment = await pay();
    const output = consoleOutput();
    const challenge = await gatewayFetch(standard.url(shop));
    expect(challenge.status).toBe(402);
    const refused = await gatewayFetch(standard.url(shop), { headers: standard.notAPayment });
    expect(refused.status).toBe(402);
    const unknown = await gatewayFetch(`${standard.url(shop)}-gone`);
    expect(unknown.status).toBe(404);
    const paid = await payment.send();
    expect(paid.status).toBe(200);
    const logged = output.entries().filter((e) => String(e.path).startsWith("/api/"));
    // One line each, in order; the challenge (the first request) has none.
    expect(logged.map((e) => e.status)).toEqual([402, 404, 200]);
    expect(logged[1]?.requestId).toBe(unknown.headers.get("x-request-id"));
  });

  describe("a payment is charged once and answered every time it is presented", () => {
    it("sent again after it completed: the same answer, byte for byte, with the same receipt; never forwarded, verified or charged again", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "2000" });
      const payment = await pay();
      const marker = crypto.randomUUID();
      const first = await answerOf(await payment.send({ query: `?marker=${marker}` }));
      expect(first.status).toBe(200);
      expect(first.body).toContain(marker);
      expect(first.headers[standard.receipt.toLowerCase()]).toBeTruthy();
      const transactionId = first.headers["payment-transaction-id"];
      expect(transactionId).toMatch(/^txn_/);
      expect(first.headers["payment-reference"]).toMatch(/^0x[0-9a-f]{64}$/);
      const verifiedBefore = await payment.verified();

      for (let i = 0; i < 2; i++) {
        const again = await answerOf(await payment.send({ query: `?marker=${marker}` }));
        expect(again.status).toBe(200);
        expect(again.body).toBe(first.body);
        // The upstream's own headers (its request id included), the receipt, the transaction and its settlement.
        expect(paidHeaders(again.headers)).toEqual(paidHeaders(first.headers));
      }
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await payment.verified()).toBe(verifiedBefore);
      expect(await payment.settled()).toBe(1);
      expect(await standard.balanceOf(payee)).toBe(2000n);
      const { transactions } = await history(shop);
      expect(transactions).toEqual([expect.objectContaining({ id: transactionId, status: "COMPLETED" })]);
      expect(transactions[0]?.txHash).toBe(first.headers["payment-reference"]);

      // Kept as a secret: sealed with the key ring, bound to the tenant and the payment, nothing of it in clear (in the
      // payment's object, the default, or in D1's paid_answers).
      const row = await storedAnswer(transactionId as string);
      expect(row).toMatchObject({ tenant_id: shop.actor.tenant.id, answer: expect.stringMatching(/^v1\.k1\./) });
      expect(sealedText(row?.answer as string)).not.toContain(marker);
      expect(row?.answer).not.toContain(marker);
    });

    it("sent ten times at once: every copy waits for the first and gets its answer; one upstream call, one settlement", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "3000", route: "/hang/300/echo" });
      const payment = await pay();
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 10 }, async () => answerOf(await payment.send())));
      // Woken by the first copy's outcome, not by the end of their bounded wait (60 s).
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      for (const a of answers) {
        expect(a.body).toBe(answers[0]?.body);
        expect(paidHeaders(a.headers)).toEqual(paidHeaders(answers[0]?.headers ?? {}));
      }
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await payment.settled()).toBe(1);
      expect(await standard.balanceOf(payee)).toBe(3000n);
      expect((await history(shop)).transactions).toHaveLength(1);
    });

    it("presented for another request (another query, another route): 409, nothing forwarded or charged again", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "2100" });
      const other = await standard.shop({ price: "2100" });
      const payment = await pay();
      expect((await payment.send({ query: "?q=1" })).status).toBe(200);
      for (const elsewhere of [
        { query: "?q=2" },
        { url: standard.name === "x402" ? other.shop.x402 : (other.shop.mpp as string) },
      ]) {
        const res = await payment.send(elsewhere);
        expect(res.status).toBe(409);
        expect(await res.json()).toMatchObject({ code: "CONFLICT", details: { reason: "other-request" } });
      }
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await upstreamRequests(other.shop.prefix)).toHaveLength(0);
      expect(await payment.settled()).toBe(1);
      expect(await standard.balanceOf(payee)).toBe(2100n);
      expect(await standard.balanceOf(other.payee)).toBe(0n);
    });
  });

  describe("the tenant's webhook endpoint hears the outcome, signed", () => {
    /** The receiver's deliveries to `inbox` once there are `n` (the queue delivers within about a second). */
    async function deliveriesTo(inbox: string, n: number) {
      let got = await received(inbox);
      for (let i = 0; i < 100 && got.length < n; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        got = await received(inbox);
      }
      return got;
    }

    it.each([
      { outcome: "a completed payment", route: "/echo", status: 200, type: "transaction.completed" },
      { outcome: "an upstream failure", route: "/status/503", status: 503, type: "transaction.failed" },
    ])(
      "$outcome: one $type, verified with standardwebhooks, the transaction as the API returns it",
      async ({ route, status, type }) => {
        const { shop, pay } = await standard.shop({ price: "2500", route });
        const inbox = newInbox("paid");
        const endpoint = await createEndpoint(shop.actor, inboxUrl(inbox));
        const payment = await pay();
        const res = await payment.send();
        expect(res.status).toBe(status);
        const [transaction] = (await history(shop)).transactions;
        const got = await deliveriesTo(inbox, 1);
        expect(got).toHaveLength(1);
        const event = new Webhook(endpoint.secret).verify(got[0]!.body, got[0]!.headers) as { type: string; data: unknown };
        expect(event.type).toBe(type);
        const asApi = await api(`/v1/transactions/${transaction!.id}`, { key: shop.actor.key });
        expect(asApi.status).toBe(200);
        expect(event.data).toEqual(asApi.body.data);
        expect(event.data).toMatchObject({
          id: transaction!.id,
          amount: "2500",
          status: status === 200 ? "COMPLETED" : "FAILED",
        });
        // Sent again, the same payment moves nothing, so it is heard of once: the paid answer again, or (its upstream
        // failed, nothing charged) the standard's refusal of a used payment; never forwarded again.
        expect((await payment.send()).status).toBe(status === 200 ? 200 : 402);
        expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
        expect((await history(shop)).transactions).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        expect(await received(inbox)).toHaveLength(1);
      },
    );
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

    it("settled later (the sweep finds it COMPLETED): the buyer's resend gets the upstream's answer with the receipt", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "7100" });
      const payment = await pay();
      const marker = crypto.randomUUID();
      const first = await payment.send({ fault: "send-dropped", query: `?marker=${marker}`, ledger: "d1" });
      expect(first.status).toBe(502);
      const { details } = (await first.json()) as { details: { transactionId: string } };
      // Kept, but not servable while PENDING: the same 502.
      expect((await payment.send({ query: `?marker=${marker}`, ledger: "d1" })).status).toBe(502);

      await payment.settleOutside();
      expect((await sweepLater()).completed).toBeGreaterThanOrEqual(1);
      expect((await history(shop)).transactions[0]).toMatchObject({ id: details.transactionId, status: "COMPLETED" });

      const res = await payment.send({ query: `?marker=${marker}`, ledger: "d1" });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ query: `marker=${marker}` });
      expect(res.headers.get(standard.receipt)).toBeTruthy();
      expect(res.headers.get("payment-transaction-id")).toBe(details.transactionId);
      expect(res.headers.get("payment-reference")).toBe((await history(shop)).transactions[0]?.txHash);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await standard.balanceOf(payee)).toBe(7100n);
    });

    it("never settled (the sweep records FAILED): its kept answer is deleted and never served", async () => {
      const { shop, payee, pay } = await standard.shop({ price: "7200" });
      const payment = await pay();
      const first = await payment.send({ fault: "send-dropped", ledger: "d1" });
      expect(first.status).toBe(502);
      const { details } = (await first.json()) as { details: { transactionId: string } };
      expect((await paidAnswerRow(details.transactionId))?.answer).toMatch(/^v1\./);

      // An hour later every authorization and transaction of it has expired unused.
      await sweepLater(3_600_000);
      expect((await history(shop)).transactions[0]).toMatchObject({ id: details.transactionId, status: "FAILED" });
      expect(await paidAnswerRow(details.transactionId)).toBeNull();

      const res = await payment.send({ ledger: "d1" });
      expect(res.status).toBe(402);
      expect(await res.text()).not.toContain(shop.prefix);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await standard.balanceOf(payee)).toBe(0n);
    });
  });
});
