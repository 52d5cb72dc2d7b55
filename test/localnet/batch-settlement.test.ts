// x402 `batch-settlement` on the local chain, proven with the standard's own code and no gateway: the official client
// (`BatchSettlementEvmScheme` through `@x402/fetch`) deposits once through the local facilitator into the channel
// contract stand-in (contracts/BatchSettlement.sol, installed at the canonical addresses), pays each further call with
// a voucher only, and the scheme's channel manager claims, settles and refunds on chain.
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { BATCH_SETTLEMENT_ADDRESS, claimBatchTypes, refundTypes, toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Address, createWalletClient, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { loadArtifacts } from "../../src/cli/localnet/contracts.ts";
import { localChain } from "../../src/cli/localnet/localnet.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import { type BatchSettlementServer, startBatchSettlementServer } from "./batch-settlement-server.ts";

const PRICE = 1_000n; // 0.001 USDC per call
const FUNDS = 1_000_000n; // 1 USDC

const channelAbi = loadArtifacts().BatchSettlement.abi;

let stack: LocalStack;

beforeAll(async () => {
  stack = await startStack({ tempo: false });
});

afterAll(async () => {
  await stack?.stop();
});

interface Session {
  server: BatchSettlementServer;
  merchant: Address;
  receiverAuthorizerKey: Hex;
  buyer: { address: Address; key: Hex };
  scheme: BatchSettlementEvmScheme;
  /** Pays as `@x402/fetch` does; records the `PAYMENT-SIGNATURE` of every request it sends. */
  fetch: (path: string) => Promise<Response>;
  sent: string[];
}

/** A fresh merchant, receiver authorizer, buyer (funded with 1 USDC) and server: no test shares a channel. */
async function openSession(): Promise<Session> {
  const merchant = privateKeyToAddress(generatePrivateKey());
  const receiverAuthorizerKey = generatePrivateKey();
  const buyerKey = generatePrivateKey();
  const account = privateKeyToAccount(buyerKey);
  await stack.localnet.mint(account.address, FUNDS);
  const server = await startBatchSettlementServer({
    facilitatorUrl: stack.facilitator.url,
    network: stack.info.network,
    usdc: stack.info.usdc,
    payTo: merchant,
    receiverAuthorizerKey,
    price: PRICE.toString(),
    upstreamUrl: stack.upstream.url,
  });
  // With chain reads, as the client recovers a channel's state from the chain and checks corrective 402s.
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, stack.localnet.client), { rpcUrl: stack.info.rpcUrl });
  const client = new x402Client().register(stack.info.network, scheme).setSpendControls({
    allowedAssets: [{ network: stack.info.network, asset: stack.info.usdc.address, maxAmountPerPayment: "100000" }],
  });
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get("PAYMENT-SIGNATURE");
    if (signature) sent.push(signature);
    return fetch(request);
  };
  const paying = wrapFetchWithPayment(recording, client);
  return {
    server,
    merchant,
    receiverAuthorizerKey,
    buyer: { address: account.address, key: buyerKey },
    scheme,
    fetch: (path) => paying(`${server.url}${path}`),
    sent,
  };
}

const channelOf = async (channelId: Hex) => {
  const [balance, totalClaimed] = (await stack.localnet.client.readContract({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: channelAbi,
    functionName: "channels",
    args: [channelId],
  })) as [bigint, bigint];
  return { balance, totalClaimed };
};

const settleCalls = () => stack.facilitator.log.filter((e) => e.endpoint === "settle").length;

describe("the channel contracts on the local chain", () => {
  it("has code at the canonical batch-settlement addresses", async () => {
    for (const address of [BATCH_SETTLEMENT_ADDRESS, "0x4020806089470a89826cB9fB1f4059150b550004"] as const) {
      const code = await stack.localnet.client.getCode({ address });
      expect(code?.length).toBeGreaterThan(2);
    }
  });

  it("lists batch-settlement on the local network in the facilitator's /supported", async () => {
    const body = (await (await fetch(`${stack.facilitator.url}/supported`)).json()) as {
      kinds: { scheme: string; network: string }[];
    };
    expect(body.kinds).toContainEqual(expect.objectContaining({ scheme: "batch-settlement", network: stack.info.network }));
  });
});

describe("a session paid by the official client", () => {
  let s: Session;
  let channelId: Hex;
  let deposit: bigint;

  beforeAll(async () => {
    s = await openSession();
  });
  afterAll(async () => {
    await s?.server.stop();
  });

  it("offers batch-settlement in the 402 with the server's receiver authorizer", async () => {
    const res = await fetch(`${s.server.url}/probe`);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    const accept = required.accepts[0];
    expect(accept).toMatchObject({ scheme: "batch-settlement", amount: PRICE.toString(), payTo: s.merchant });
    expect(accept?.extra).toMatchObject({ receiverAuthorizer: privateKeyToAccount(s.receiverAuthorizerKey).address });
  });

  it("deposits once through the facilitator, then pays each call by voucher with no transaction", async () => {
    const before = await stack.localnet.balanceOf(s.buyer.address);
    const first = await s.fetch("/calls/1");
    expect(first.status).toBe(200);
    const opened = paymentResponseOf(first);
    expect(opened?.success).toBe(true);
    expect(opened?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    deposit = BigInt(opened?.amount ?? "0");
    expect(deposit).toBeGreaterThanOrEqual(PRICE);
    channelId = (opened?.extra as { channelState?: { channelId: Hex } } | undefined)?.channelState?.channelId as Hex;
    expect(await stack.localnet.balanceOf(s.buyer.address)).toBe(before - deposit);
    expect(await channelOf(channelId)).toEqual({ balance: deposit, totalClaimed: 0n });

    const settlesAfterDeposit = settleCalls();
    for (let i = 2; i <= 5; i++) {
      const res = await s.fetch(`/calls/${i}`);
      expect(res.status).toBe(200);
      const answer = paymentResponseOf(res);
      expect(answer).toMatchObject({ success: true, transaction: "" });
      expect(answer?.extra).toMatchObject({ chargedAmount: PRICE.toString() });
    }
    // Vouchers never reach the chain or the facilitator's settle; the buyer's balance did not move again.
    expect(settleCalls()).toBe(settlesAfterDeposit);
    expect(await stack.localnet.balanceOf(s.buyer.address)).toBe(before - deposit);
    expect(stack.upstream.requestsUnder("/calls/")).toHaveLength(5);
    expect((await s.server.scheme.getStorage().get(channelId))?.chargedCumulativeAmount).toBe((5n * PRICE).toString());
  });

  it("charges nothing when the upstream fails, and the same voucher then pays a call that succeeds", async () => {
    const failed = await s.fetch("/calls/status/500");
    expect(failed.status).toBe(500);
    expect((await s.server.scheme.getStorage().get(channelId))?.chargedCumulativeAmount).toBe((5n * PRICE).toString());
    const voucher = s.sent.at(-1) as string;
    const retried = await fetch(`${s.server.url}/calls/6`, { headers: { "PAYMENT-SIGNATURE": voucher } });
    expect(retried.status).toBe(200);
    expect((await s.server.scheme.getStorage().get(channelId))?.chargedCumulativeAmount).toBe((6n * PRICE).toString());
  });

  it("refuses a voucher sent again with the scheme's corrective 402, charging nothing twice", async () => {
    const replayed = s.sent.at(-1) as string;
    const upstreamCalls = stack.upstream.requestsUnder("/calls/").length;
    const res = await fetch(`${s.server.url}/calls/7`, { headers: { "PAYMENT-SIGNATURE": replayed } });
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    expect(required.accepts[0]?.extra?.channelState).toMatchObject({ chargedCumulativeAmount: (6n * PRICE).toString() });
    expect(stack.upstream.requestsUnder("/calls/")).toHaveLength(upstreamCalls);
    expect((await s.server.scheme.getStorage().get(channelId))?.chargedCumulativeAmount).toBe((6n * PRICE).toString());
    // The corrective 402 carries the buyer's own last voucher: the client checks it and resumes from the server's state
    // (its own state missed the call paid above outside it).
    expect(await s.scheme.processCorrectivePaymentRequired(required)).toBe(true);
  });

  it("claims and settles exactly what was charged to the receiver, in two rounds", async () => {
    await s.server.manager.claimAndSettle();
    expect(await stack.localnet.balanceOf(s.merchant)).toBe(6n * PRICE);
    for (let i = 8; i <= 9; i++) expect((await s.fetch(`/calls/${i}`)).status).toBe(200);
    await s.server.manager.claimAndSettle();
    expect(await stack.localnet.balanceOf(s.merchant)).toBe(8n * PRICE);
    expect(await channelOf(channelId)).toEqual({ balance: deposit, totalClaimed: 8n * PRICE });
  });

  it("refunds the rest to the buyer on the client's refund()", async () => {
    const answer = await s.scheme.refund(`${s.server.url}/calls/refund`);
    expect(answer.success).toBe(true);
    expect(BigInt(answer.amount ?? "0")).toBe(deposit - 8n * PRICE);
    expect(await stack.localnet.balanceOf(s.buyer.address)).toBe(FUNDS - 8n * PRICE);
    expect(await channelOf(channelId)).toEqual({ balance: 8n * PRICE, totalClaimed: 8n * PRICE });
    expect(await stack.localnet.balanceOf(s.merchant)).toBe(8n * PRICE);
  });
});

describe("claims the contract refuses", () => {
  let s: Session;
  let channelId: Hex;

  beforeAll(async () => {
    s = await openSession();
    for (let i = 1; i <= 3; i++) expect((await s.fetch(`/claims/${i}`)).status).toBe(200);
    const stored = await s.server.scheme.getStorage().list();
    channelId = stored[0]?.channelId as Hex;
  });
  afterAll(async () => {
    await s?.server.stop();
  });

  /** An account unrelated to the channel that sends the signed transactions (claims and refunds are relay-friendly). */
  const relayer = () =>
    createWalletClient({
      account: privateKeyToAccount(stack.info.deployer.privateKey),
      chain: localChain(stack.info.chainId, stack.info.rpcUrl),
      transport: http(stack.info.rpcUrl, { retryCount: 0 }),
    });

  /** A claim row for the channel's latest voucher, signed by the receiver authorizer, sent by an unrelated relayer. */
  const submitClaim = async (totalClaimed: bigint) => {
    const channel = await s.server.scheme.getStorage().get(channelId);
    if (!channel) throw new Error("no channel");
    const chainId = stack.info.chainId;
    const authorizer = privateKeyToAccount(s.receiverAuthorizerKey);
    const maxClaimableAmount = BigInt(channel.signedMaxClaimable);
    const authorizerSignature = await authorizer.signTypedData({
      domain: { name: "x402 Batch Settlement", version: "1", chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
      types: claimBatchTypes,
      primaryType: "ClaimBatch",
      message: { claims: [{ channelId, maxClaimableAmount, totalClaimed }] },
    });
    const claim = {
      voucher: { channel: channel.channelConfig, maxClaimableAmount },
      signature: channel.signature as Hex,
      totalClaimed,
    };
    const hash = await relayer().writeContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: channelAbi,
      functionName: "claimWithSignature",
      args: [[claim], authorizerSignature],
      gas: 500_000n,
    });
    return (await stack.localnet.client.waitForTransactionReceipt({ hash })).status;
  };

  it("reverts a claim above the payer's signed voucher, and the receiver can settle nothing from it", async () => {
    expect(await submitClaim(3n * PRICE + 1n)).toBe("reverted");
    expect(await channelOf(channelId)).toMatchObject({ totalClaimed: 0n });
  });

  it("counts a replayed claim once: totals are cumulative", async () => {
    expect(await submitClaim(3n * PRICE)).toBe("success");
    expect(await submitClaim(3n * PRICE)).toBe("success");
    expect(await channelOf(channelId)).toMatchObject({ totalClaimed: 3n * PRICE });
    await s.server.manager.settle();
    expect(await stack.localnet.balanceOf(s.merchant)).toBe(3n * PRICE);
  });

  it("never refunds claimed funds: a refund of the whole balance returns only the unclaimed rest", async () => {
    const channel = await s.server.scheme.getStorage().get(channelId);
    if (!channel) throw new Error("no channel");
    const { balance } = await channelOf(channelId);
    const nonce = (await stack.localnet.client.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: channelAbi,
      functionName: "refundNonce",
      args: [channelId],
    })) as bigint;
    const signature = await privateKeyToAccount(s.receiverAuthorizerKey).signTypedData({
      domain: {
        name: "x402 Batch Settlement",
        version: "1",
        chainId: stack.info.chainId,
        verifyingContract: BATCH_SETTLEMENT_ADDRESS,
      },
      types: refundTypes,
      primaryType: "Refund",
      message: { channelId, nonce, amount: balance },
    });
    const hash = await relayer().writeContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: channelAbi,
      functionName: "refundWithSignature",
      args: [channel.channelConfig, balance, nonce, signature],
      gas: 500_000n,
    });
    expect((await stack.localnet.client.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await stack.localnet.balanceOf(s.buyer.address)).toBe(FUNDS - 3n * PRICE);
    expect(await channelOf(channelId)).toEqual({ balance: 3n * PRICE, totalClaimed: 3n * PRICE });
  });
});
