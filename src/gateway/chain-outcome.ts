import { createClient, encodeEventTopics, erc20Abi, http, isAddressEqual, type Log, parseEventLogs, toHex } from "viem";
import { getBlockNumber, getTransactionReceipt, readContract } from "viem/actions";
import { networkTable } from "../core/money/network-table.ts";
import type { NetworkId } from "../core/money/networks.ts";
import type { PendingPayment } from "../db/ledger.ts";
import type { NewTransaction } from "../db/transactions.ts";
import type { Settlement } from "./pipeline/method.ts";

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
  | {
      status: "UNKNOWN";
      reason: string;
      /** x402: the token answered that the authorization is unused (else: used, or the chain did not answer). */
      unused?: true;
    };

/** The reason an UNKNOWN outcome gives when the chain's RPC did not answer (the sweep stops asking that network). */
export const CHAIN_UNREACHABLE = "the chain could not be reached";

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
/**
 * The blocks one `eth_getLogs` asks about, newest first: many RPCs cap a query's range (commonly 2,000 to 10,000
 * blocks). An RPC that refuses even this range is asked again in `LOG_CHUNK_FALLBACK_BLOCKS` pieces, at most
 * `LOG_QUERIES_MAX` queries per payment (so a tightly capped RPC searches fewer blocks back than the lookback).
 */
export const LOG_CHUNK_BLOCKS = 1_000n;
export const LOG_CHUNK_FALLBACK_BLOCKS = 50n;
export const LOG_QUERIES_MAX = 30;

const client = (rpcUrl: string) => createClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) });

/** EIP-3009 (USDC's FiatToken v2): whether an authorization was used or canceled, and the events that say which. */
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
  {
    type: "event",
    name: "AuthorizationCanceled",
    inputs: [
      { name: "authorizer", type: "address", indexed: true },
      { name: "nonce", type: "bytes32", indexed: true },
    ],
  },
] as const;

export interface X402Authorization {
  /** The token the payment was made in (`pending_payments.asset`). */
  asset: `0x${string}`;
  payer: `0x${string}`;
  nonce: `0x${string}`;
  validBefore: Date;
  /** The payee and the atomic amount its transfer must carry (`pending_payments.pay_to`, the transaction's amount). */
  payTo: `0x${string}`;
  amount: string;
}

/**
 * An x402 payment from its token: `authorizationState(payer, nonce)` says whether the EIP-3009 authorization was
 * used (or canceled: the state is per payer and nonce, whatever the payee). Used → the transaction of its
 * `AuthorizationUsed` log, searched newest first, must carry `Transfer(payer → payTo, amount)` in the asset:
 * COMPLETED with its hash; another transfer, or an `AuthorizationCanceled` log → FAILED; neither log found yet →
 * UNKNOWN. Unused past `validBefore` → FAILED (nothing can move it anymore); unused before → UNKNOWN.
 */
export async function x402ChainOutcome(rpcUrl: string, a: X402Authorization, now = new Date()): Promise<ChainOutcome> {
  const c = client(rpcUrl);
  let used: boolean;
  try {
    used = await readContract(c, {
      address: a.asset,
      abi: eip3009Abi,
      functionName: "authorizationState",
      args: [a.payer, a.nonce],
    });
  } catch {
    return { status: "UNKNOWN", reason: CHAIN_UNREACHABLE };
  }
  if (!used) {
    return now.getTime() >= a.validBefore.getTime() + EXPIRY_MARGIN_MS
      ? { status: "FAILED", reason: "the payment's authorization expired unused" }
      : { status: "UNKNOWN", reason: "the payment's authorization is unused and still valid", unused: true };
  }
  let log: { eventName: string; transactionHash: `0x${string}` } | undefined;
  try {
    log = await findAuthorizationLog(c, a);
  } catch {
    return { status: "UNKNOWN", reason: "the payment's authorization is used; its log could not be searched" };
  }
  if (!log) return { status: "UNKNOWN", reason: "the payment's authorization is used, its transaction not found yet" };
  if (log.eventName === "AuthorizationCanceled") return { status: "FAILED", reason: "the payer canceled the authorization" };
  let paid: boolean;
  try {
    const receipt = await getTransactionReceipt(c, { hash: log.transactionHash });
    paid = parseEventLogs({
      abi: erc20Abi,
      eventName: "Transfer",
      logs: receipt.logs.filter((l) => isAddressEqual(l.address, a.asset)),
    }).some(
      (t) => isAddressEqual(t.args.from, a.payer) && isAddressEqual(t.args.to, a.payTo) && t.args.value === BigInt(a.amount),
    );
  } catch {
    return { status: "UNKNOWN", reason: "the payment's authorization is used; its transaction could not be read" };
  }
  return paid
    ? { status: "COMPLETED", txHash: log.transactionHash }
    : { status: "FAILED", reason: "the authorization was used for another transfer" };
}

/** The newest `AuthorizationUsed` / `AuthorizationCanceled` log of (payer, nonce) within the lookback. */
async function findAuthorizationLog(c: ReturnType<typeof client>, a: X402Authorization) {
  const [usedTopic, authorizerTopic, nonceTopic] = encodeEventTopics({
    abi: eip3009Abi,
    eventName: "AuthorizationUsed",
    args: { authorizer: a.payer, nonce: a.nonce },
  });
  const [canceledTopic] = encodeEventTopics({ abi: eip3009Abi, eventName: "AuthorizationCanceled" });
  const latest = await getBlockNumber(c);
  const oldest = latest > LOG_LOOKBACK_BLOCKS ? latest - LOG_LOOKBACK_BLOCKS : 0n;
  let chunk = LOG_CHUNK_BLOCKS;
  let to = latest;
  for (let queries = 0; to >= oldest && queries < LOG_QUERIES_MAX; queries++) {
    const from = to - chunk + 1n > oldest ? to - chunk + 1n : oldest;
    let logs: Log[];
    try {
      logs = await c.request({
        method: "eth_getLogs",
        params: [
          {
            address: a.asset,
            fromBlock: toHex(from),
            toBlock: toHex(to),
            topics: [[usedTopic, canceledTopic], authorizerTopic, nonceTopic],
          },
        ],
      } as never);
    } catch (err) {
      // A range this RPC refuses: the same blocks again in smaller pieces, once.
      if (chunk === LOG_CHUNK_FALLBACK_BLOCKS) throw err;
      chunk = LOG_CHUNK_FALLBACK_BLOCKS;
      continue;
    }
    const [found] = parseEventLogs({ abi: eip3009Abi, logs }).slice(-1);
    if (found?.transactionHash) return { eventName: found.eventName, transactionHash: found.transactionHash };
    to = from - 1n;
  }
  return undefined;
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
      return { status: "UNKNOWN", reason: CHAIN_UNREACHABLE };
    }
    return now.getTime() >= p.validBefore.getTime() + EXPIRY_MARGIN_MS
      ? { status: "FAILED", reason: "the payment's transaction expired without being mined" }
      : { status: "UNKNOWN", reason: "the payment's transaction is not mined yet" };
  }
}

/**
 * Where a PENDING payment stands on chain, from what its start kept to settle it (`pending`): x402 by its
 * authorization, MPP by its transaction. The Cron sweep and the payment's own object (its alarm) both ask here.
 */
export function paymentChainOutcome(
  env: Env,
  t: Pick<NewTransaction, "network" | "protocol" | "payerAddress" | "amount">,
  pending: Pick<PendingPayment, "asset" | "reference" | "validBefore" | "payTo">,
  now: Date,
): Promise<ChainOutcome> {
  const entry = networkTable(env)[t.network as NetworkId];
  if (!entry) return Promise.resolve({ status: "UNKNOWN", reason: "the network is not in the network table" });
  if (t.protocol !== "x402") {
    return tempoChainOutcome(entry.rpcUrl, { hash: pending.reference as `0x${string}`, validBefore: pending.validBefore }, now);
  }
  const authorization: X402Authorization = {
    asset: pending.asset as `0x${string}`,
    payer: (t.payerAddress ?? "") as `0x${string}`,
    nonce: pending.reference as `0x${string}`,
    validBefore: pending.validBefore,
    payTo: pending.payTo as `0x${string}`,
    amount: t.amount,
  };
  return x402ChainOutcome(entry.rpcUrl, authorization, now);
}

/** A settlement whose answer was lost, settled from the chain: `refuse` gives the standard's refusal. */
export async function settlementFromChain(
  outcome: ChainOutcome,
  settled: (txHash: string) => Promise<Record<string, string>>,
  refuse: (reason: string) => Promise<Response> | Response,
  txHash?: string,
): Promise<Settlement> {
  if (outcome.status === "COMPLETED") return { kind: "settled", txHash: outcome.txHash, headers: await settled(outcome.txHash) };
  if (outcome.status === "FAILED") {
    const reason = `settlement failed: ${outcome.reason}`;
    return { kind: "refused", reason, response: await refuse(reason) };
  }
  return { kind: "unknown", reason: `settlement outcome unknown: ${outcome.reason}`, ...(txHash ? { txHash } : {}) };
}
