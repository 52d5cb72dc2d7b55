// x402 settlements whose answer is lost (the facilitator settled, or not, and the gateway never heard): the gateway
// asks the token (EIP-3009 `authorizationState`) instead of telling a buyer who may have paid to pay again, and the
// Cron sweep settles what stays PENDING. Faults are the outbound router's (src/cli/localnet/outbound.ts): the real
// facilitator settles on the real chain behind `answer-lost.` and settles nothing behind `send-dropped.`.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { createPublicClient, createWalletClient, defineChain, erc20Abi, http, parseSignature } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Buyer, paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { EXPIRY_MARGIN_MS } from "../../src/gateway/chain-outcome.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/sweep.ts";
import { VALID_BEFORE_SKEW_SECONDS } from "../../src/gateway/x402/sdk.ts";
import worker from "../../src/index.ts";
import { send } from "../support/client.ts";
import { forceStatusStatement } from "../support/ledger-fixture.ts";
import {
  balanceOf,
  FACILITATOR,
  type FacilitatorLogEntry,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  net,
  openShop,
  receiptOf,
  type Shop,
  settlementsOf,
  signedPayment,
  upstreamRequests,
  waitFor,
} from "./support.ts";

/**
 * These payments are recorded by the D1 ledger, whose Cron sweep (`sweepAt`) settles them: payments recorded before
 * the objects (the default) are swept so. A payment recorded in its object is swept by its object (sweep.test.ts).
 */
const D1_LEDGER = { ...GATEWAY_ENV, PAYMENT_RECORDS: "d1" } as Partial<Env>;

/**
 * The gateway with its testnet facilitator behind a fault: of the outbound router (`answer-lost`, `send-dropped`), or
 * of the local facilitator itself (`settlement-pending…`: a 200 answer, src/cli/localnet/facilitator.ts).
 */
const payThrough = (
  fault: "answer-lost" | "send-dropped" | "settlement-pending" | "settlement-pending-unsent",
  url: string,
  header: string,
) =>
  send(new Request(url, { headers: { "PAYMENT-SIGNATURE": header } }), {
    ...D1_LEDGER,
    FACILITATOR_URL_TESTNET: fault.startsWith("settlement-pending")
      ? `${FACILITATOR}/__fault/${fault}`
      : FACILITATOR.replace("https://", `https://${fault}.`),
  } as Partial<Env>);

const sweepAt = (at: number, sweepEnv: Env = env) =>
  worker.scheduled(createScheduledController({ scheduledTime: at, cron: PAYMENT_SWEEP_CRON }), sweepEnv);

const localChain = defineChain({
  id: net.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: ["https://rpc.gateway.test"] } },
});
const chain = createPublicClient({ transport: http("https://rpc.gateway.test") });

/** The local token: an ERC-20 with EIP-3009 `cancelAuthorization` and an open `mint(to, value)` for funding. */
const testUsdcAbi = [
  ...erc20Abi,
  {
    type: "function",
    name: "cancelAuthorization",
    stateMutability: "nonpayable",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
      { name: "v", type: "uint8" },
      { name: "r", type: "bytes32" },
      { name: "s", type: "bytes32" },
    ],
    outputs: [],
  },
  {
    type: "function",
    name: "mint",
    stateMutability: "nonpayable",
    inputs: [
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
    ],
    outputs: [],
  },
] as const;

/** The Worker's `NETWORK_OVERRIDES` with the local chain read at `rpcUrl` instead. */
function withRpcUrl(rpcUrl: string): string {
  const overrides = JSON.parse((env as unknown as { NETWORK_OVERRIDES: string }).NETWORK_OVERRIDES) as Record<
    string,
    { rpcUrl?: string }
  >;
  for (const entry of Object.values(overrides)) {
    if (entry.rpcUrl === "https://rpc.gateway.test") entry.rpcUrl = rpcUrl;
  }
  return JSON.stringify(overrides);
}

type Authorization = { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
const authorizationOf = (payload: PaymentPayload) => (payload.payload as { authorization: Authorization }).authorization;

/** The buyer's payment with its authorization changed and signed again (EIP-3009 `TransferWithAuthorization`). */
async function resigned(payload: PaymentPayload, requirements: PaymentRequirements, changes: Partial<Authorization>) {
  const authorization = { ...authorizationOf(payload), ...changes };
  const signature = await privateKeyToAccount(net.buyer.privateKey).signTypedData({
    domain: { name: net.usdc.name, version: net.usdc.version, chainId: net.chainId, verifyingContract: net.usdc.address },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: {
      from: authorization.from as `0x${string}`,
      to: authorization.to as `0x${string}`,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as `0x${string}`,
    },
  });
  const accepted = { ...requirements, payTo: authorization.to };
  return { payload: { ...payload, accepted, payload: { authorization, signature } } as PaymentPayload, requirements: accepted };
}

const pendingRows = async (transactionId: string) =>
  (await env.DB.prepare("SELECT reference FROM pending_payments WHERE transaction_id = ?").bind(transactionId).all()).results;

describe("the facilitator settled, then its answer was lost", () => {
  it("the token says the authorization was used: the buyer gets the upstream's answer, COMPLETED with the transfer's hash", async () => {
    const shop = await openShop({ price: "7100" });
    const { header, nonce } = await signedPayment(shop.x402);
    const res = await payThrough("answer-lost", shop.x402, header);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: `${shop.prefix}/echo` });
    const [settled] = await settlementsOf(nonce);
    expect(settled?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(paymentResponseOf(res)).toMatchObject({ success: true, transaction: settled?.transaction });
    expect(await balanceOf(shop.merchant)).toBe(7100n);
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: settled?.transaction })]);
    expect((await receiptOf(settled?.transaction as `0x${string}`)).status).toBe("success");
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });
});

describe("the settlement was never made, and its answer was lost", () => {
  it("unused and still valid: 502 PAYMENT_OUTCOME_UNKNOWN with the transaction id (never a new 402); PENDING until the sweep sees it used", async () => {
    const shop = await openShop({ price: "7200" });
    const { header, nonce, payload, required } = await signedPayment(shop.x402);
    const res = await payThrough("send-dropped", shop.x402, header);
    expect(res.status).toBe(502);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const body = (await res.json()) as { code: string; error: string; details: { transactionId: string } };
    expect(body).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", meta: { requestId: expect.stringMatching(/^req_/) } });
    expect(body.error).toMatch(/do not pay again/i);
    expect(await settlementsOf(nonce)).toHaveLength(0);
    let { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ id: body.details.transactionId, status: "PENDING", txHash: null })]);
    expect(events.map((e) => e.eventType)).toEqual(["REQUEST"]);

    // A sweep while the authorization is unused and valid leaves it PENDING.
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });

    // Whoever holds the authorization submits it (it was sent once and may still land): the sweep sees it used.
    const direct = await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(payload, required.accepts[0]!);
    expect(direct.success).toBe(true);
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    ({ transactions, events } = await history(shop));
    expect(transactions[0]).toMatchObject({ status: "COMPLETED", txHash: direct.transaction });
    expect(events.find((e) => e.eventType === "SUCCESS")).toMatchObject({ amount: "7200", metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.merchant)).toBe(7200n);
    expect(await pendingRows(body.details.transactionId)).toEqual([]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("unused past validBefore: the sweep records FAILED with the reason and an ERROR event; nothing moved", async () => {
    const shop = await openShop({ price: "7300" });
    const { header, payload } = await signedPayment(shop.x402);
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(502);
    const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore) * 1000;
    await sweepAt(validBefore + EXPIRY_MARGIN_MS + 1_000);
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "FAILED", failureReason: "the payment's authorization expired unused" });
    expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.merchant)).toBe(0n);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });
});

describe("the sweep and a PENDING row nobody settled", () => {
  it("a payment recorded PENDING whose request ended before settling: FAILED once its authorization expired unused", async () => {
    const shop = await openShop({ price: "7400", route: "/status/500" });
    const { header, payload } = await signedPayment(shop.x402);
    // A 5xx ends FAILED at once; put the row back to PENDING as an invocation cut off mid-way would leave it.
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(500);
    const [row] = (await history(shop)).transactions;
    await env.DB.batch([
      forceStatusStatement(env.DB, row!.id, { status: "PENDING" }),
      env.DB.prepare("DELETE FROM events WHERE event_type = 'ERROR' AND paywall_id = ?").bind(shop.paywallId),
      env.DB.prepare(
        "INSERT INTO pending_payments (transaction_id, tenant_id, reference, valid_before, asset, pay_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(
        row!.id,
        shop.actor.tenant.id,
        (payload.payload as { authorization: { nonce: string } }).authorization.nonce,
        Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore) * 1000,
        net.usdc.address,
        shop.merchant,
        Date.now(),
      ),
    ]);
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });
    await sweepAt(Date.now() + 3_600_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "FAILED" });
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});

describe("the facilitator answered 200 settlement_pending (sent, receipt not seen)", () => {
  it("the transfer was mined: the buyer gets the upstream's answer, COMPLETED with its hash (never FAILED and a new 402)", async () => {
    const shop = await openShop({ price: "7500" });
    const { header, nonce } = await signedPayment(shop.x402);
    const res = await payThrough("settlement-pending", shop.x402, header);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    // The facilitator's answers: settlement_pending with the hash, then (the SDK's one retry) a refusal, nonce used.
    const log = (await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as FacilitatorLogEntry[];
    const answers = log.filter((e) => e.endpoint === "settle" && e.nonce?.toLowerCase() === nonce.toLowerCase());
    expect(answers.map((e) => e.ok)).toEqual([false, false]);
    const [settled] = answers;
    expect(settled).toMatchObject({ reason: "settlement_pending", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect((await receiptOf(settled?.transaction as `0x${string}`)).status).toBe("success");
    expect(paymentResponseOf(res)).toMatchObject({ success: true, transaction: settled?.transaction });
    expect(await balanceOf(shop.merchant)).toBe(7500n);
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: settled?.transaction })]);
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });

  it("its transaction never landed: 502 PAYMENT_OUTCOME_UNKNOWN with the hash, PENDING; FAILED by the sweep once expired unused", async () => {
    const shop = await openShop({ price: "7600" });
    const { header, payload } = await signedPayment(shop.x402);
    const res = await payThrough("settlement-pending-unsent", shop.x402, header);
    expect(res.status).toBe(502);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const body = (await res.json()) as { code: string; details: { transactionId: string; txHash: string } };
    expect(body).toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
      details: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
    expect((await history(shop)).transactions).toEqual([
      expect.objectContaining({ id: body.details.transactionId, status: "PENDING" }),
    ]);
    await sweepAt(Number(authorizationOf(payload).validBefore) * 1000 + EXPIRY_MARGIN_MS + 1_000);
    expect((await history(shop)).transactions[0]).toMatchObject({
      status: "FAILED",
      failureReason: "the payment's authorization expired unused",
    });
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});

describe("the authorization was used, but not to pay this merchant", () => {
  it("the buyer spent the same nonce on another payee: the sweep records FAILED, never COMPLETED with that transfer", async () => {
    const shop = await openShop({ price: "7700" });
    const { header, payload, required } = await signedPayment(shop.x402);
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(502);

    // Same payer, same nonce, another payee: mined first, the token marks the nonce used.
    const elsewhere = privateKeyToAddress(generatePrivateKey());
    const other = await resigned(payload, required.accepts[0]!, { to: elsewhere });
    const direct = await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(other.payload, other.requirements);
    expect(direct.success, JSON.stringify(direct)).toBe(true);
    expect(await balanceOf(elsewhere)).toBe(7700n);

    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({
      status: "FAILED",
      txHash: null,
      failureReason: "the authorization was used for another transfer",
    });
    expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});

describe("an RPC that caps the block range of eth_getLogs", () => {
  it("the sweep still finds the transfer: COMPLETED with its hash, searched newest first in smaller ranges", async () => {
    const shop = await openShop({ price: "7800" });
    const { header, payload, required } = await signedPayment(shop.x402);
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(502);
    const direct = await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(payload, required.accepts[0]!);
    expect(direct.success).toBe(true);
    // More blocks than the capped RPC answers for in one query, and than one fallback range.
    await chain.request({ method: "anvil_mine" as never, params: ["0x96", "0x0"] as never });
    const latest = await chain.getBlock();
    expect(latest.number).toBeGreaterThan(150n);

    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000, {
      ...env,
      NETWORK_OVERRIDES: withRpcUrl("https://logs-capped.rpc.gateway.test"),
    } as Env);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "COMPLETED", txHash: direct.transaction });
    expect(await balanceOf(shop.merchant)).toBe(7800n);
  });
});

describe("an authorization valid for longer than the requirement allows", () => {
  it("is refused with a 402 before verification: nothing recorded, nothing sent to the facilitator", async () => {
    const shop = await openShop({ price: "7900" });
    const { payload, required, b, nonce } = await signedPayment(shop.x402);
    const maxTimeout = required.accepts[0]!.maxTimeoutSeconds;
    const yearLong = await resigned(payload, required.accepts[0]!, {
      validBefore: String(Math.floor(Date.now() / 1000) + 365 * 86_400),
    });
    const res = await send(new Request(shop.x402, { headers: b.http.encodePaymentSignatureHeader(yearLong.payload) }), D1_LEDGER);
    expect(res.status).toBe(402);
    const challenge = b.http.getPaymentRequiredResponse((name) => res.headers.get(name), await res.json());
    // The refusal names the real cutoff: now + maxTimeoutSeconds + the allowed clock skew.
    const cutoff = /past the latest this gateway accepts \(([^)]+)\)/.exec(challenge.error ?? "")?.[1];
    const cutoffIn = (Date.parse(cutoff as string) - Date.now()) / 1000;
    expect(cutoffIn).toBeGreaterThan(maxTimeout + VALID_BEFORE_SKEW_SECONDS - 5);
    expect(cutoffIn).toBeLessThanOrEqual(maxTimeout + VALID_BEFORE_SKEW_SECONDS);
    expect((await history(shop)).transactions).toEqual([]);
    const log = (await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as { nonce?: string }[];
    expect(log.filter((e) => e.nonce?.toLowerCase() === nonce.toLowerCase())).toEqual([]);

    // Within the bound (the SDK's own validBefore, now + maxTimeoutSeconds) the same buyer pays.
    const ok = await resigned(payload, required.accepts[0]!, {
      validBefore: String(Math.floor(Date.now() / 1000) + maxTimeout),
    });
    const paid = await send(new Request(shop.x402, { headers: b.http.encodePaymentSignatureHeader(ok.payload) }), D1_LEDGER);
    expect(paid.status, await paid.clone().text()).toBe(200);
  });
});

/**
 * A payment by a buyer of its own whose funds leave while the upstream works (`/hang`): the facilitator's settle then
 * refuses it (insufficient funds, no transaction). `rpcUrl` is where the gateway reads the token.
 */
async function payThenDrain(shop: Shop, rpcUrl?: string) {
  const key = generatePrivateKey();
  const wallet = createWalletClient({
    account: privateKeyToAccount(key),
    chain: localChain,
    transport: http("https://rpc.gateway.test"),
  });
  await chain.request({ method: "anvil_setBalance" as never, params: [wallet.account.address, "0xde0b6b3a7640000"] as never });
  const move = async (functionName: "mint" | "transfer", to: `0x${string}`) => {
    const hash = await wallet.writeContract({ address: net.usdc.address, abi: testUsdcAbi, functionName, args: [to, 8100n] });
    expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
  };
  await move("mint", wallet.account.address);
  const b = createX402Buyer({ privateKey: key, network: net.network, usdc: net.usdc.address, fetch: gatewayFetch });
  const challenge = await gatewayFetch(shop.x402);
  const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
  const header = b.http.encodePaymentSignatureHeader(await b.http.createPaymentPayload(required));
  const paid = send(new Request(shop.x402, { headers: header }), {
    ...D1_LEDGER,
    ...(rpcUrl ? { NETWORK_OVERRIDES: withRpcUrl(rpcUrl) } : {}),
  } as Partial<Env>);
  await waitFor(async () => (await history(shop)).transactions[0]);
  await move("transfer", privateKeyToAddress(generatePrivateKey()));
  return paid;
}

describe("a definite refusal by the facilitator (nothing sent)", () => {
  it("the buyer's funds left between verification and settlement: FAILED and a 402 with the refusal, as before", async () => {
    const shop = await openShop({ price: "8100", route: "/hang/4000/echo" });
    const res = await payThenDrain(shop);
    expect(res.status).toBe(402);
    expect(paymentResponseOf(res)).toMatchObject({ success: false, transaction: "" });
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "FAILED", txHash: null });
    expect(transactions[0]?.failureReason).toMatch(/^settlement failed: .*insufficient/i);
    expect(events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("the same refusal while the token cannot be read: 502 PAYMENT_OUTCOME_UNKNOWN and PENDING, never FAILED unseen", async () => {
    const shop = await openShop({ price: "8100", route: "/hang/4000/echo" });
    const res = await payThenDrain(shop, "https://unreachable.gateway.test");
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN" });
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });
  });
});

describe("the payer canceled the authorization (EIP-3009 cancelAuthorization)", () => {
  it("the token says used, its log says canceled: the sweep records FAILED, never PENDING forever", async () => {
    const shop = await openShop({ price: "8200" });
    const { header, nonce } = await signedPayment(shop.x402);
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(502);

    const buyerAccount = privateKeyToAccount(net.buyer.privateKey);
    const signature = await buyerAccount.signTypedData({
      domain: { name: net.usdc.name, version: net.usdc.version, chainId: net.chainId, verifyingContract: net.usdc.address },
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: buyerAccount.address, nonce: nonce as `0x${string}` },
    });
    // Anyone may submit the payer's signed cancellation.
    const relayer = createWalletClient({
      account: privateKeyToAccount(generatePrivateKey()),
      chain: localChain,
      transport: http("https://rpc.gateway.test"),
    });
    await chain.request({ method: "anvil_setBalance" as never, params: [relayer.account.address, "0xde0b6b3a7640000"] as never });
    const { r, s, v } = parseSignature(signature);
    const hash = await relayer.writeContract({
      address: net.usdc.address,
      abi: testUsdcAbi,
      functionName: "cancelAuthorization",
      args: [buyerAccount.address, nonce as `0x${string}`, Number(v), r, s],
    });
    expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");

    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    const { transactions } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "FAILED", failureReason: "the payer canceled the authorization" });
    expect(await balanceOf(shop.merchant)).toBe(0n);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });
});
