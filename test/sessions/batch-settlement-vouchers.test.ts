// @x402/evm's batch-settlement server scheme, as published, on the Durable Object channel storage: vouchers of an EOA
// payer verified without a facilitator round trip, two concurrent vouchers on one channel (from two isolates' servers)
// never both accepted, and a voucher's charge committed once.

import { env } from "cloudflare:workers";
import type { FacilitatorClient } from "@x402/core/server";
import { x402ResourceServer } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme, type Channel } from "@x402/evm/batch-settlement/server";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { DurableChannelStorage } from "../../src/core/sessions/channel-storage.ts";

const NETWORK: Network = "eip155:84532";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PRICE = 1_000n;

/**
 * The facilitator, a system these tests do not run: it only answers what it supports. Every call to verify or settle
 * is counted; a voucher of an EOA payer on a channel with fresh state must need none.
 */
function facilitatorStandIn() {
  const calls: string[] = [];
  const client: FacilitatorClient = {
    verify: async () => {
      calls.push("verify");
      return { isValid: false, invalidReason: "unexpected_facilitator_call" };
    },
    settle: async () => {
      calls.push("settle");
      return { success: false, errorReason: "unexpected_facilitator_call", transaction: "", network: NETWORK };
    },
    getSupported: async () => ({
      kinds: [{ x402Version: 2, scheme: "batch-settlement", network: NETWORK }],
      extensions: [],
      signers: {},
    }),
  };
  return { client, calls };
}

/** One isolate's server: the scheme over the shared Durable Object storage of one scope. */
async function serverOn(scope: string, payTo: `0x${string}`, authorizerKey: `0x${string}`, facilitator: FacilitatorClient) {
  const scheme = new BatchSettlementEvmScheme(payTo, {
    storage: new DurableChannelStorage(env.CHANNELS, scope),
    receiverAuthorizerSigner: privateKeyToAccount(authorizerKey),
    withdrawDelay: 900,
  });
  const server = new x402ResourceServer(facilitator).register(NETWORK, scheme);
  await server.initialize();
  const [requirements] = await server.buildPaymentRequirements({
    scheme: "batch-settlement",
    network: NETWORK,
    payTo,
    price: { amount: PRICE.toString(), asset: ASSET, extra: { name: "USDC", version: "2" } },
    maxTimeoutSeconds: 60,
  });
  return { server, scheme, requirements: requirements as PaymentRequirements };
}

/** An open channel with a deposit of 1 USDC and nothing charged, as the storage holds it after a fresh chain read. */
async function openChannel() {
  const scope = `test-${crypto.randomUUID()}`;
  const payTo = privateKeyToAddress(generatePrivateKey());
  const authorizerKey = generatePrivateKey();
  const buyer = privateKeyToAccount(generatePrivateKey());
  const facilitator = facilitatorStandIn();
  const a = await serverOn(scope, payTo, authorizerKey, facilitator.client);
  const b = await serverOn(scope, payTo, authorizerKey, facilitator.client);
  const channelConfig = {
    payer: buyer.address,
    payerAuthorizer: buyer.address,
    receiver: payTo,
    receiverAuthorizer: privateKeyToAccount(authorizerKey).address,
    token: ASSET,
    withdrawDelay: 900,
    salt: `0x${"0".repeat(64)}`,
  } as const;
  const channelId = computeChannelId(channelConfig, NETWORK);
  const now = Date.now();
  const channel: Channel = {
    channelId,
    channelConfig,
    chargedCumulativeAmount: "0",
    signedMaxClaimable: "0",
    signature: "0x",
    balance: "1000000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: now,
    lastRequestTimestamp: now,
  };
  await new DurableChannelStorage(env.CHANNELS, scope).updateChannel(channelId, () => channel);
  const voucher = async (maxClaimableAmount: bigint, requirements: PaymentRequirements): Promise<PaymentPayload> => ({
    x402Version: 2,
    accepted: requirements,
    payload: {
      type: "voucher",
      channelConfig,
      voucher: await signVoucher(buyer, channelId, maxClaimableAmount.toString(), NETWORK),
    },
  });
  const charged = async () => (await new DurableChannelStorage(env.CHANNELS, scope).get(channelId))?.chargedCumulativeAmount;
  return { a, b, voucher, charged, facilitator };
}

describe("vouchers on the Durable Object channel storage", () => {
  it("verifies and commits a voucher locally: no facilitator call, the charge committed once", async () => {
    const { a, voucher, charged, facilitator } = await openChannel();
    const payload = await voucher(PRICE, a.requirements);
    const verified = await a.server.verifyPayment(payload, a.requirements);
    expect(verified.isValid).toBe(true);
    expect(await charged()).toBe("0");
    const settled = await a.server.settlePayment(payload, a.requirements);
    expect(settled).toMatchObject({ success: true, transaction: "" });
    expect(await charged()).toBe(PRICE.toString());
    expect(facilitator.calls).toEqual([]);
  });

  it("two concurrent vouchers for the same charge, at two isolates' servers: one accepted, charged once", async () => {
    const { a, b, voucher, charged } = await openChannel();
    const [pa, pb] = [await voucher(PRICE, a.requirements), await voucher(PRICE, b.requirements)];
    const results = await Promise.all([a.server.verifyPayment(pa, a.requirements), b.server.verifyPayment(pb, b.requirements)]);
    expect(results.filter((r) => r.isValid)).toHaveLength(1);
    expect(results.find((r) => !r.isValid)?.invalidReason).toBe("invalid_batch_settlement_evm_channel_busy");
    const [winner, payload] = results[0]?.isValid ? [a, pa] : [b, pb];
    expect(await winner.server.settlePayment(payload, winner.requirements)).toMatchObject({ success: true });
    expect(await charged()).toBe(PRICE.toString());
  });

  it("a voucher whose charge was committed is refused when sent again, and nothing more is charged", async () => {
    const { a, b, voucher, charged } = await openChannel();
    const payload = await voucher(PRICE, a.requirements);
    expect((await a.server.verifyPayment(payload, a.requirements)).isValid).toBe(true);
    await a.server.settlePayment(payload, a.requirements);
    const again = await b.server.verifyPayment(payload, b.requirements);
    expect(again).toMatchObject({ isValid: false, invalidReason: "invalid_batch_settlement_evm_cumulative_amount_mismatch" });
    expect(await charged()).toBe(PRICE.toString());
  });
});
