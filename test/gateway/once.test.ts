// Exactly once, beyond the contract both standards share (contract.test.ts): x402's `payment-identifier` (a retry
// under the buyer's own id with a new authorization gets the first answer and is never settled; the id for another
// request is 409; a retry not signed by the payer gets nothing), MPP's equivalent (a new transaction for a challenge
// already paid), an answer over the kept size, and a copy's bounded wait for an owner that never finishes.
import { env } from "cloudflare:workers";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { generatePaymentId } from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { paymentRecordIds } from "../../src/core/ledger/ids.ts";
import { type PaymentStart, startPayment } from "../../src/core/ledger/ledger.ts";
import * as recorded from "../../src/core/ledger/recorded.ts";
import { getDb } from "../../src/db/client.ts";
import { buyerProof, MAX_KEPT_ANSWER_BYTES, requestFingerprint } from "../../src/gateway/paid-answer.ts";
import { x402CredentialDigest } from "../../src/gateway/x402/presented.ts";
import { challengeNonceOf } from "../../src/gateway/x402/sdk.ts";
import { send } from "../support/client.ts";
import {
  balanceOf,
  buyer,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  keptAnswer,
  openShop,
  settlementsOf,
  signedPayment,
  signedWithId,
  upstreamRequests,
  verificationsOf,
} from "./support.ts";
import { mppShop, TEMPO_RPC, tempo, tempoBalanceOf } from "./tempo-support.ts";

const payX402 = (url: string, header: string, init: RequestInit = {}) =>
  send(new Request(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header } }), GATEWAY_ENV);

const answerOf = async (res: Response) => ({
  status: res.status,
  body: await res.text(),
  headers: Object.fromEntries([...res.headers].filter(([name]) => !["x-request-id", "date"].includes(name))),
});

/** A payment started where the gateway records it (`PAYMENT_RECORDS`): in D1, or in its object. */
const startRecorded = (p: PaymentStart) =>
  env.PAYMENT_RECORDS === "objects" ? recorded.startPayment(env, p) : startPayment(getDb(env.DB), p);

describe("x402 payment-identifier", () => {
  it("is advertised in the 402, not required", async () => {
    const shop = await openShop();
    const challenge = await gatewayFetch(shop.x402);
    const required = decodePaymentRequiredHeader(challenge.headers.get("PAYMENT-REQUIRED") as string);
    expect(required.extensions?.["payment-identifier"]).toMatchObject({ info: { required: false }, schema: expect.any(Object) });
  });

  it("a retry under the same id with a new authorization: the first answer; the new authorization is never verified or settled", async () => {
    const shop = await openShop({ price: "1500" });
    const id = generatePaymentId();
    const first = await signedWithId(shop.x402, id);
    const firstAnswer = await answerOf(await payX402(shop.x402, first.header));
    expect(firstAnswer.status).toBe(200);

    const retry = await signedWithId(shop.x402, id);
    expect(retry.nonce).not.toBe(first.nonce);
    const again = await answerOf(await payX402(shop.x402, retry.header));
    expect(again).toEqual(firstAnswer);
    expect(await verificationsOf(retry.nonce)).toBe(0);
    expect(await settlementsOf(retry.nonce)).toEqual([]);
    expect(await settlementsOf(first.nonce)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(1500n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect((await history(shop)).transactions).toHaveLength(1);
  });

  it("the same id for another request: 409, nothing verified, forwarded or charged", async () => {
    const shop = await openShop({ price: "1600" });
    const id = generatePaymentId();
    expect((await payX402(shop.x402, (await signedWithId(shop.x402, id)).header)).status).toBe(200);
    const reuse = await signedWithId(`${shop.x402}?other=1`, id);
    const res = await payX402(`${shop.x402}?other=1`, reuse.header);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: "CONFLICT", details: { reason: "other-request" } });
    expect(await verificationsOf(reuse.nonce)).toBe(0);
    expect(await balanceOf(shop.merchant)).toBe(1600n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("a retry under the id that the payer did not sign gets no answer (refused as any invalid payment)", async () => {
    const shop = await openShop({ price: "1700" });
    const id = generatePaymentId();
    const marker = crypto.randomUUID();
    const url = `${shop.x402}?marker=${marker}`;
    expect((await payX402(url, (await signedWithId(url, id)).header)).status).toBe(200);
    // Someone who learnt the id and the payer's address: an authorization "from" the payer, not signed by it.
    const forged = await signedWithId(url, id);
    const authorization = (forged.payload.payload as { authorization: { nonce: string } }).authorization;
    authorization.nonce = `0x${"ab".repeat(32)}`;
    const header = buyer().http.encodePaymentSignatureHeader(forged.payload)["PAYMENT-SIGNATURE"] as string;
    const res = await payX402(url, header);
    expect(res.status).toBe(402);
    expect(await res.text()).not.toContain(marker);
    expect(await balanceOf(shop.merchant)).toBe(1700n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("a payment made under an id is answered again only to credentials carrying it (its authorization alone is public on chain)", async () => {
    const shop = await openShop({ price: "1750" });
    const marker = crypto.randomUUID();
    const url = `${shop.x402}?marker=${marker}`;
    const paid = await signedWithId(url, generatePaymentId());
    expect((await payX402(url, paid.header)).status).toBe(200);
    // What an observer rebuilds from the settled transfer: the same authorization and signature, without the id.
    const rebuilt = structuredClone(paid.payload);
    rebuilt.extensions = {};
    const header = buyer().http.encodePaymentSignatureHeader(rebuilt)["PAYMENT-SIGNATURE"] as string;
    const res = await payX402(url, header);
    expect(res.status).toBe(402);
    expect(await res.text()).not.toContain(marker);
    expect(await payX402(url, paid.header).then((r) => r.status)).toBe(200);
    expect(await balanceOf(shop.merchant)).toBe(1750n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("two authorizations under one id at once: one is settled, both get its answer", async () => {
    const shop = await openShop({ price: "1800", route: "/hang/300/echo" });
    const id = generatePaymentId();
    const [a, b] = [await signedWithId(shop.x402, id), await signedWithId(shop.x402, id)];
    const answers = await Promise.all([a, b].map(async (p) => answerOf(await payX402(shop.x402, p.header))));
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(answers[1]).toEqual(answers[0]);
    const settled = (await settlementsOf(a.nonce)).length + (await settlementsOf(b.nonce)).length;
    expect(settled).toBe(1);
    expect(await balanceOf(shop.merchant)).toBe(1800n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});

describe("MPP: the challenge id is the retry key", () => {
  it("a new transaction for a challenge already paid: validated by mppx, answered with the first answer, never broadcast", async () => {
    const shop = await mppShop({ price: "1900" });
    const account = tempo.buyers[tempo.buyers.length - 1]!;
    const mppBuyer = createMppBuyer({
      privateKey: account.privateKey,
      rpcUrl: TEMPO_RPC,
      chainId: tempo.chainId,
      fetch: gatewayFetch,
    });
    const challenge = await gatewayFetch(shop.mpp);
    const first = await mppBuyer.mppx.createCredential(challenge.clone());
    const firstAnswer = await answerOf(await send(new Request(shop.mpp, { headers: { Authorization: first } }), GATEWAY_ENV));
    expect(firstAnswer.status).toBe(200);
    const second = await mppBuyer.mppx.createCredential(challenge.clone());
    expect(second).not.toBe(first);
    const again = await answerOf(await send(new Request(shop.mpp, { headers: { Authorization: second } }), GATEWAY_ENV));
    expect(again).toEqual(firstAnswer);
    expect(await tempoBalanceOf(shop.recipient)).toBe(1900n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});

describe("kept answers", () => {
  it(`an answer over ${MAX_KEPT_ANSWER_BYTES} bytes reaches the buyer whole; presented again: 409 answer-not-kept, never charged twice`, async () => {
    const shop = await openShop({ price: "2200", paywall: { allowedMethods: ["POST"] } });
    const body = "x".repeat(MAX_KEPT_ANSWER_BYTES + 1);
    const init = { method: "POST", body, headers: { "Content-Type": "text/plain" } };
    const b = buyer();
    const challenge = await gatewayFetch(shop.x402, { method: "POST" });
    const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
    const header = b.http.encodePaymentSignatureHeader(await b.http.createPaymentPayload(required))[
      "PAYMENT-SIGNATURE"
    ] as string;
    const first = await payX402(shop.x402, header, init);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { body: string }).body).toBe(body);
    const transactionId = first.headers.get("payment-transaction-id") as string;
    expect(await keptAnswer(transactionId)).toMatchObject({ answer: null, answeredAt: expect.any(Number) });

    const again = await payX402(shop.x402, header, init);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      code: "CONFLICT",
      details: { transactionId, reason: "answer-not-kept", txHash: expect.stringMatching(/^0x/) },
    });
    expect(await balanceOf(shop.merchant)).toBe(2200n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("a copy waits for its owner only so long: an owner that never finishes leaves it 502 PAYMENT_OUTCOME_UNKNOWN", async () => {
    const shop = await openShop({ price: "2300" });
    const { payload } = await signedPayment(shop.x402);
    const { signature, authorization } = payload.payload as { signature: string; authorization: { from: string; nonce: string } };
    // A payment started by an owner that then vanished (an evicted isolate): recorded PENDING, its answer claimed,
    // and nobody ever tells the copies.
    const { transactionId } = await paymentRecordIds("x402", "base-sepolia", authorization.from, authorization.nonce);
    const now = Date.now();
    expect(
      await startRecorded({
        transactionId,
        tenantId: shop.actor.tenant.id,
        paywallId: shop.paywallId,
        serviceId: shop.serviceId,
        protocol: "x402",
        network: "base-sepolia",
        amount: "2300",
        currency: "USDC",
        payer: authorization.from,
        method: "GET",
        pending: { reference: authorization.nonce, validBefore: new Date(now + 300_000), asset: "0x0", payTo: shop.merchant },
        claim: {
          paymentKey: null,
          fingerprint: await requestFingerprint("GET", shop.x402, undefined),
          credential: await x402CredentialDigest(signature),
          buyerProof: await buyerProof(challengeNonceOf(payload), undefined),
          ownerUntil: new Date(now + 1_500),
          expiresAt: new Date(now + 60_000),
        },
      }),
    ).toBe(true);
    const header = buyer().http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string;
    const started = Date.now();
    const res = await payX402(shop.x402, header);
    const waited = Date.now() - started;
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", details: { transactionId } });
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(10_000);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
  });
});
