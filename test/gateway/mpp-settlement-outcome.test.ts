// MPP broadcasts whose answer is lost: the signed Tempo transaction's hash is known before it is sent, so the
// gateway asks the chain for its receipt instead of telling a buyer who may have paid to pay again, and the Cron
// sweep settles what stays PENDING. Faults are the outbound router's (src/cli/localnet/outbound.ts) in front of the
// local Tempo chain: `answer-lost.` sends the transaction and drops the answer, `send-dropped.` sends nothing,
// `send-refused.` answers the send with the node's JSON-RPC refusal.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Credential, Receipt } from "mppx";
import { sendRawTransactionSync } from "viem/actions";
import { Account as TempoAccount, Transaction } from "viem/tempo";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { EXPIRY_MARGIN_MS } from "../../src/gateway/chain-outcome.ts";
import { tempoTransactionFacts } from "../../src/gateway/mpp/tempo-transaction.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/sweep.ts";
import worker from "../../src/index.ts";
import { send } from "../support/client.ts";
import { GATEWAY_ENV, gatewayFetch, history, net, openShop, upstreamRequests } from "./support.ts";
import {
  tempoBalanceOf as balanceOf,
  tempoClient as client,
  mppShop,
  TEMPO_RPC as RPC,
  setTempoWallet,
  tempo,
} from "./tempo-support.ts";

let nextBuyer = 0;
const mppBuyer = () => {
  const account = tempo.buyers[nextBuyer++]!;
  return {
    privateKey: account.privateKey,
    ...createMppBuyer({ privateKey: account.privateKey, rpcUrl: RPC, chainId: tempo.chainId, fetch: gatewayFetch }),
  };
};

/** A credential for the shop's challenge (pull mode: signed, nothing sent) and its signed transaction's facts. */
async function credentialFor(url: string) {
  const buyer = mppBuyer();
  const credential = await buyer.mppx.createCredential(await gatewayFetch(url));
  const signed = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
  return { credential, signed, facts: await tempoTransactionFacts(signed), privateKey: buyer.privateKey };
}

/** The same credential with its transaction's `validBefore` changed (unix seconds; `undefined`: none), signed again by the buyer. */
async function withValidBefore(c: Awaited<ReturnType<typeof credentialFor>>, validBefore: number | undefined) {
  const parsed = Credential.deserialize(c.credential);
  const { signature: _, ...transaction } = Transaction.deserialize(c.signed as Transaction.TransactionSerializedTempo) as Record<
    string,
    unknown
  >;
  const signed = await TempoAccount.fromSecp256k1(c.privateKey).signTransaction({ ...transaction, validBefore } as never);
  return Credential.serialize({ ...parsed, payload: { type: "transaction", signature: signed } } as never);
}

/** The gateway with the Tempo RPC behind a fault of the outbound router. */
function payThrough(
  fault: "answer-lost" | "send-dropped" | "send-refused",
  url: string,
  credential: string,
  client?: { ip: string; refusalLimit: number },
) {
  const overrides = {
    ...JSON.parse(net.networkOverrides),
    "tempo-testnet": { rpcUrl: `https://${fault}.tempo-rpc.gateway.test` },
  };
  const headers = { Authorization: credential, ...(client ? { "CF-Connecting-IP": client.ip } : {}) };
  return send(new Request(url, { headers }), {
    ...GATEWAY_ENV,
    // Recorded by the D1 ledger, whose Cron sweep (`sweepAt`) settles it (payments recorded before the objects).
    PAYMENT_RECORDS: "d1",
    NETWORK_OVERRIDES: JSON.stringify(overrides),
    ...(client ? { PAYMENT_REFUSAL_LIMIT: String(client.refusalLimit) } : {}),
  } as Partial<Env>);
}

const sweepAt = (at: number) => worker.scheduled(createScheduledController({ scheduledTime: at, cron: PAYMENT_SWEEP_CRON }), env);

describe("MPP: the transaction was sent, then the RPC's answer was lost", () => {
  it("its receipt says it succeeded: the buyer gets the upstream's answer with a Payment-Receipt, COMPLETED with the hash", async () => {
    const shop = await mppShop({ price: "8100" });
    const { credential, facts } = await credentialFor(shop.mpp);
    const res = await payThrough("answer-lost", shop.mpp, credential);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: `${shop.prefix}/echo` });
    expect(Receipt.fromResponse(res)).toMatchObject({ status: "success", reference: facts.hash });
    expect(await balanceOf(shop.recipient)).toBe(8100n);
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: facts.hash })]);
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
  }, 60_000); // the first MPP request loads mppx
});

describe("MPP: the transaction was not sent, and the RPC's answer was lost", () => {
  it("no receipt yet: 502 PAYMENT_OUTCOME_UNKNOWN with the hash, PENDING with it; mined later, the sweep records COMPLETED", async () => {
    const shop = await mppShop({ price: "8200" });
    const { credential, signed, facts } = await credentialFor(shop.mpp);
    const res = await payThrough("send-dropped", shop.mpp, credential);
    expect(res.status).toBe(502);
    expect(res.headers.get("www-authenticate")).toBeNull();
    const body = (await res.json()) as { code: string; details: { transactionId: string; txHash: string } };
    expect(body).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", details: { txHash: facts.hash } });
    let { transactions } = await history(shop);
    expect(transactions).toEqual([
      expect.objectContaining({ id: body.details.transactionId, status: "PENDING", txHash: facts.hash }),
    ]);
    expect(await balanceOf(shop.recipient)).toBe(0n);

    // The buyer (who holds the signed transaction) sends it before it expires: its hash is the one on record.
    const receipt = await sendRawTransactionSync(client, { serializedTransaction: signed });
    expect(receipt.transactionHash).toBe(facts.hash);
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    ({ transactions } = await history(shop));
    expect(transactions[0]).toMatchObject({ status: "COMPLETED", txHash: facts.hash });
    expect(await balanceOf(shop.recipient)).toBe(8200n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("never mined: PENDING while it could still be, FAILED by the sweep once past its validBefore", async () => {
    const shop = await mppShop({ price: "8300" });
    const { credential, facts } = await credentialFor(shop.mpp);
    expect((await payThrough("send-dropped", shop.mpp, credential)).status).toBe(502);
    const validBefore = (facts.validBefore as number) * 1000;
    await sweepAt(Math.min(validBefore + EXPIRY_MARGIN_MS - 1_000, Date.now() + SWEEP_MIN_AGE_MS + 1_000));
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });
    await sweepAt(validBefore + EXPIRY_MARGIN_MS + 1_000);
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({
      status: "FAILED",
      txHash: null,
      failureReason: "the payment's transaction expired without being mined",
    });
    expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.recipient)).toBe(0n);
  });
});

describe("MPP: the node refuses the sent transaction (a JSON-RPC error)", () => {
  it("the money did not move: 402 with a fresh challenge, FAILED, not 502", async () => {
    const shop = await mppShop({ price: "8400" });
    const { credential } = await credentialFor(shop.mpp);
    const res = await payThrough("send-refused", shop.mpp, credential);
    expect(res.status, await res.clone().text()).toBe(402);
    expect(res.headers.get("www-authenticate")).toMatch(/^Payment /);
    const { transactions } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "FAILED", txHash: null })]);
    expect(await balanceOf(shop.recipient)).toBe(0n);
  });
});

describe("MPP: the transaction's own expiry", () => {
  it("a validBefore later than the challenge's expiry, or none: 402 before anything is forwarded or recorded", async () => {
    const shop = await mppShop({ price: "8500" });
    const c = await credentialFor(shop.mpp);
    for (const validBefore of [Math.floor(Date.now() / 1000) + 3600, undefined]) {
      const res = await send(
        new Request(shop.mpp, { headers: { Authorization: await withValidBefore(c, validBefore) } }),
        GATEWAY_ENV,
      );
      expect(res.status).toBe(402);
      expect(await res.json()).toMatchObject({ detail: expect.stringContaining("validBefore") });
    }
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toEqual([]);
  });

  it("too little time left before the transaction expires: 402 before the upstream is called", async () => {
    const shop = await mppShop({ price: "8600" });
    const c = await credentialFor(shop.mpp);
    const credential = await withValidBefore(c, Math.floor(Date.now() / 1000) + 5);
    const res = await send(new Request(shop.mpp, { headers: { Authorization: credential } }), GATEWAY_ENV);
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ detail: expect.stringContaining("expires too soon") });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toEqual([]);
    expect(await balanceOf(shop.recipient)).toBe(0n);
  });

  it("an upstream slower than the transaction allows is cut short: 504, FAILED, nothing charged (not an expired broadcast)", async () => {
    const shop = await openShop({ networks: ["tempo-testnet"], price: "8700", route: "/hang/27000" });
    const recipient = await setTempoWallet(shop.actor.tenant.id);
    const { credential, facts } = await credentialFor(shop.mpp as string);
    const res = await send(new Request(shop.mpp as string, { headers: { Authorization: credential } }), GATEWAY_ENV);
    expect(res.status, await res.clone().text()).toBe(504);
    expect(Date.now()).toBeLessThan((facts.validBefore as number) * 1000);
    const { transactions } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "FAILED" })]);
    expect(await balanceOf(recipient)).toBe(0n);
  }, 60_000);
});
