// Loaded lazily by mpp.ts (like ./lib.ts): viem's Tempo transaction codec, which mppx's server already bundles.
import { keccak256 } from "viem";
import { Transaction } from "viem/tempo";

/**
 * What a signed Tempo transaction (an MPP pull-mode credential) will be on chain before it is sent: its hash, as
 * mppx's tempo charge computes it when it broadcasts without a fee payer (the canonical re-serialization, hashed),
 * and its `validBefore` (unix seconds), past which no block can include it.
 */
export async function tempoTransactionFacts(serialized: `0x${string}`): Promise<{ hash: `0x${string}`; validBefore?: number }> {
  const transaction = Transaction.deserialize(serialized as Transaction.TransactionSerializedTempo);
  const hash = keccak256(await Transaction.serialize(transaction));
  return { hash, ...(transaction.validBefore === undefined ? {} : { validBefore: Number(transaction.validBefore) }) };
}
