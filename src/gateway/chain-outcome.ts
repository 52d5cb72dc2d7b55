import { createClient, http } from "viem";
import { getBlockNumber, getLogs, getTransactionReceipt, readContract } from "viem/actions";

/**
 * Where a payment stands on chain when the gateway could not see its settlement's answer (the facilitator's
 * `/settle` or mppx's broadcast threw after the money may have moved): the request path and the Cron sweep both
 * ask here, so they never disagree.
 *
 * - `COMPLETED`: the money moved (the hash of the transaction that moved it).
 * - `FAILED`: it did not and can no longer move (reverted, or expired unused).
 * - `UNKNOWN`: not seen yet and still able to move, or the chain did not answer: the transaction stays PENDING.
 */
export type ChainOutcome =
  | { status: "COMPLETED"; txHash: string }
  | { status: "FAILED"; reason: string }
  | { status: "UNKNOWN"; reason: string };

/**
 * Kept past a payment's `validBefore` before calling it expired: the chain's block time, not this clock, decides,
 * and a transaction sent just before the deadline may still be in a block being built.
 */
export const EXPIRY_MARGIN_MS = 60_000;
/**
 * How far back the `AuthorizationUsed` log of a used x402 authorization is looked for: the sweep runs every few
 * minutes and a payment expires within minutes, so its transfer is recent (10,000 blocks ≥ 5 h on Base at 2 s).
 */
export const LOG_LOOKBACK_BLOCKS = 10_000n;

const client = (rpcUrl: string) => createClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) });

/** EIP-3009 (USDC's FiatToken v2): whether an authorization was used, and the event its use emits. */
const eip3009Abi = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ name: "", type: "bool" }],
  },
  {
    type: "event",
    name: "AuthorizationUsed",
    inputs: [
      { name: "authorizer", type: "address", indexed: true },
      { name: "nonce", type: "bytes32", indexed: true },
    ],
  },
] as const;

export interface X402Authorization {
  /** The token (the network's USDC). */
  asset: `0x${string}`;
  payer: `0x${string}`;
  nonce: `0x${string}`;
  validBefore: Date;
}

/**
 * An x402 payment from its token: `authorizationState(payer, nonce)` says whether the EIP-3009 authorization was
 * used. Used → COMPLETED with the transaction of its `AuthorizationUsed` log (UNKNOWN while that log is not found);
 * unused past `validBefore` → FAILED (nothing can move it anymore); unused before → UNKNOWN.
 */
export async function x402ChainOutcome(rpcUrl: string, a: X402Authorization, now = new Date()): Promise<ChainOutcome> {
  try {
    const c = client(rpcUrl);
    const used = await readContract(c, {
      address: a.asset,
      abi: eip3009Abi,
      functionName: "authorizationState",
      args: [a.payer, a.nonce],
    });
    if (!used) {
      return now.getTime() >= a.validBefore.getTime() + EXPIRY_MARGIN_MS
        ? { status: "FAILED", reason: "the payment's authorization expired unused" }
        : { status: "UNKNOWN", reason: "the payment's authorization is unused and still valid" };
    }
    const latest = await getBlockNumber(c);
    const logs = await getLogs(c, {
      address: a.asset,
      event: eip3009Abi[1],
      args: { authorizer: a.payer, nonce: a.nonce },
      fromBlock: latest > LOG_LOOKBACK_BLOCKS ? latest - LOG_LOOKBACK_BLOCKS : 0n,
      toBlock: latest,
    });
    const txHash = logs[0]?.transactionHash;
    return txHash
      ? { status: "COMPLETED", txHash }
      : { status: "UNKNOWN", reason: "the payment's authorization is used, its transaction not found yet" };
  } catch {
    return { status: "UNKNOWN", reason: "the chain could not be reached" };
  }
}

export interface TempoPayment {
  /** The hash the signed transaction has on chain (known before it is sent: ./tempo-transaction.ts). */
  hash: `0x${string}`;
  validBefore: Date;
}

/**
 * An MPP payment from its transaction's receipt. mppx validated that exact transaction (its transfer of the amount
 * to the recipient, with the challenge's memo) before it was sent, and a Tempo transaction's calls succeed or
 * revert together: a successful receipt is the payment. Reverted → FAILED; no receipt past `validBefore` → FAILED
 * (no block can include it anymore); no receipt before → UNKNOWN.
 */
export async function tempoChainOutcome(rpcUrl: string, p: TempoPayment, now = new Date()): Promise<ChainOutcome> {
  try {
    const receipt = await getTransactionReceipt(client(rpcUrl), { hash: p.hash });
    return receipt.status === "success"
      ? { status: "COMPLETED", txHash: receipt.transactionHash }
      : { status: "FAILED", reason: "the payment's transaction reverted" };
  } catch (err) {
    if (!(err instanceof Error && err.name === "TransactionReceiptNotFoundError")) {
      return { status: "UNKNOWN", reason: "the chain could not be reached" };
    }
    return now.getTime() >= p.validBefore.getTime() + EXPIRY_MARGIN_MS
      ? { status: "FAILED", reason: "the payment's transaction expired without being mined" }
      : { status: "UNKNOWN", reason: "the payment's transaction is not mined yet" };
  }
}
