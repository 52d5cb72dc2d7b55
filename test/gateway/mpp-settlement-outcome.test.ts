// MPP broadcasts whose answer is lost: the signed Tempo transaction's hash is known before it is sent, so the
// gateway asks the chain for its receipt instead of telling a buyer who may have paid to pay again, and the Cron
// sweep settles what stays PENDING. Faults are the outbound router's (test/localnet/outbound.ts) in front of the
// local Tempo chain: `answer-lost.` sends the transaction and drops the answer, `send-dropped.` sends nothing.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Credential, Receipt } from "mppx";
import { createClient, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { sendRawTransactionSync } from "viem/actions";
import { tempoModerato } from "viem/chains";
import { Actions } from "viem/tempo";
import { describe, expect, it } from "vitest";
import { EXPIRY_MARGIN_MS } from "../../src/gateway/chain-outcome.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/reconcile.ts";
import { tempoTransactionFacts } from "../../src/gateway/tempo-transaction.ts";
import worker from "../../src/index.ts";
import { createMppBuyer } from "../localnet/mpp-buyer.ts";
import { send } from "../support/client.ts";
import { GATEWAY_ENV, gatewayFetch, history, net, openShop, upstreamRequests } from "./support.ts";

const RPC = "https://tempo-rpc.gateway.test";
const tempo = net.tempo!;
const chain = { ...tempoModerato, id: tempo.chainId, rpcUrls: { default: { http: [RPC] } } };
const client = createClient({ chain, transport: http(RPC, { retryCount: 0 }) });
const balanceOf = async (address: string) =>
  (await Actions.token.getBalance(client, { token: tempo.currency, account: address as `0x${string}` })).amount;

let nextBuyer = 0;
const mppBuyer = () => {
  const account = tempo.buyers[nextBuyer++]!;
  return createMppBuyer({ privateKey: account.privateKey, rpcUrl: RPC, chainId: tempo.chainId, fetch: gatewayFetch });
};

async function mppShop(price: string) {
  const shop = await openShop({ networks: ["tempo-testnet"], price });
  const recipient = privateKeyToAddress(generatePrivateKey());
  await env.DB.prepare("UPDATE tenants SET tempo_wallet_address = ? WHERE id = ?").bind(recipient, shop.actor.tenant.id).run();
  return { ...shop, mpp: shop.mpp as string, recipient };
}

/** A credential for the shop's challenge (pull mode: signed, nothing sent) and its signed transaction's facts. */
async function credentialFor(url: string) {
  const credential = await mppBuyer().mppx.createCredential(await gatewayFetch(url));
  const signed = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
  return { credential, signed, facts: await tempoTransactionFacts(signed) };
}

/** The gateway with the Tempo RPC behind a fault of the outbound router. */
function payThrough(fault: "answer-lost" | "send-dropped", url: string, credential: string) {
  const overrides = {
    ...JSON.parse(net.networkOverrides),
    "tempo-testnet": { rpcUrl: `https://${fault}.tempo-rpc.gateway.test` },
  };
  return send(new Request(url, { headers: { Authorization: credential } }), {
    ...GATEWAY_ENV,
    NETWORK_OVERRIDES: JSON.stringify(overrides),
  } as Partial<Env>);
}

const sweepAt = (at: number) => worker.scheduled(createScheduledController({ scheduledTime: at, cron: PAYMENT_SWEEP_CRON }), env);

describe("MPP: the transaction was sent, then the RPC's answer was lost", () => {
  it("its receipt says it succeeded: the buyer gets the upstream's answer with a Payment-Receipt, COMPLETED with the hash", async () => {
    const shop = await mppShop("8100");
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
    const shop = await mppShop("8200");
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
    const shop = await mppShop("8300");
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
