/**
 * Sign-In with Ethereum (EIP-4361) with viem's SIWE utilities. The server builds the message it wants signed:
 * this deployment's domain and URI, the wallet's address and chain id, issued-at, an expiration 5 minutes later,
 * and a single-use nonce stored with what it was issued for (purpose, chain id, address, statement). Verification
 * parses the signed text, checks every field against this deployment, the clock and the nonce (the chain id written
 * as a canonical decimal, valid for no longer than a nonce lives, the statement offered, no field the server did not
 * write), uses the nonce up (a replay finds none), and recovers the signer from the signature (EOA, offline).
 */

import { createSiweMessage, generateSiweNonce, parseSiweMessage, validateSiweMessage } from "viem/siwe";
import { getAddress, isAddress, isAddressEqual, recoverMessageAddress } from "viem/utils";
import type { Db } from "../db/client.ts";
import { consumeNonce, insertNonce } from "../db/dashboard.ts";

export const NONCE_TTL_MS = 5 * 60 * 1000;
/** How far a wallet's clock may be ahead of ours. */
const CLOCK_SKEW_MS = 60_000;

/** Where the dashboard is served: the SIWE `domain` (host) and `uri` come from here. */
export interface Deployment {
  origin: string;
}

export class SiweError extends Error {}

const deploymentOf = (origin: string) => ({ domain: new URL(origin).host, uri: `${origin}/dashboard` });

/**
 * A chain id as EIP-155 writes it in decimal: `1`, `8453`; never `0x1`, `01`, `1.0`, `1e3`, ` 1` or one past
 * `Number.MAX_SAFE_INTEGER` (each would name the same chain under another spelling, or lose digits).
 */
export function canonicalChainId(text: string): number | undefined {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The `Chain ID:` line of a SIWE message as written (viem's parser reads `0001` as `1`). */
const CHAIN_ID_LINE = /\nChain ID: ([^\n]*)\n/;

/** Binds a nonce to what it may sign: the purpose (sign-in, or a wallet change of one tenant), chain and address. */
const nonceBinding = (purpose: string, chainId: number, address: string) => `${purpose}|${chainId}|${address.toLowerCase()}`;
/** What a nonce row keeps: the statement offered (a SIWE statement has no line break), then its binding. */
const STATEMENT_SEPARATOR = "\n";

/** Issues a nonce and returns the exact message for the wallet to sign. */
export async function issueSiweMessage(
  db: Db,
  request: { origin: string; address: string; chainId: string; purpose: string; statement: string; now: Date },
): Promise<string> {
  if (!isAddress(request.address, { strict: false })) throw new SiweError("The wallet address is not valid");
  const chainId = canonicalChainId(request.chainId);
  if (chainId === undefined) throw new SiweError("The chain id is not valid: a positive decimal integer without leading zeros");
  const nonce = generateSiweNonce();
  const expiresAt = new Date(request.now.getTime() + NONCE_TTL_MS);
  const offered = `${request.statement}${STATEMENT_SEPARATOR}${nonceBinding(request.purpose, chainId, request.address)}`;
  await insertNonce(db, nonce, offered, request.now, expiresAt);
  return createSiweMessage({
    ...deploymentOf(request.origin),
    address: getAddress(request.address),
    chainId,
    nonce,
    version: "1",
    statement: request.statement,
    issuedAt: request.now,
    expirationTime: expiresAt,
  });
}

/**
 * Verifies a signed message for `purpose`: the wallet address that signed it, or a `SiweError` saying what is
 * wrong (wrong domain or URI, expired, nonce unknown or already used, signature not from the message's address).
 */
export async function verifySiweMessage(
  db: Db,
  request: { origin: string; message: string; signature: string; purpose: string; now: Date },
): Promise<`0x${string}`> {
  if (request.message.length > 4000) throw new SiweError("The message is too long");
  if (!/^0x[0-9a-fA-F]{130}$/.test(request.signature)) throw new SiweError("The signature is not a 65-byte hex string");
  const message = parseSiweMessage(request.message);
  const { domain, uri } = deploymentOf(request.origin);
  if (message.domain !== domain) throw new SiweError(`The message is for another site (${message.domain ?? "none"})`);
  if (message.uri !== uri) throw new SiweError("The message is for another address of this site");
  if (message.version !== "1" || !message.nonce || !message.address || !message.chainId) {
    throw new SiweError("The message is not a complete Sign-In with Ethereum message");
  }
  if (!message.issuedAt || !message.expirationTime) throw new SiweError("The message needs an issued-at and an expiration time");
  if (canonicalChainId(CHAIN_ID_LINE.exec(request.message)?.[1] ?? "") !== message.chainId) {
    throw new SiweError("The message's chain id is not a canonical decimal number");
  }
  if (message.issuedAt.getTime() > request.now.getTime() + CLOCK_SKEW_MS)
    throw new SiweError("The message is issued in the future");
  // A nonce lives NONCE_TTL_MS: a message that claims to stay valid longer was not written by this server.
  if (message.expirationTime.getTime() - message.issuedAt.getTime() > NONCE_TTL_MS) {
    throw new SiweError("The message is valid for longer than a sign-in request lasts (5 minutes)");
  }
  if (!validateSiweMessage({ message, domain, time: request.now }))
    throw new SiweError("The message has expired or is not valid");
  if (message.resources !== undefined || message.notBefore !== undefined || message.requestId !== undefined) {
    throw new SiweError("The message has fields this site did not ask you to sign (resources, not-before, request id)");
  }
  const offered = await consumeNonce(db, message.nonce, request.now);
  const at = offered?.lastIndexOf(STATEMENT_SEPARATOR) ?? -1;
  if (offered === undefined || offered.slice(at + 1) !== nonceBinding(request.purpose, message.chainId, message.address)) {
    throw new SiweError("The sign-in request has expired or was already used; start again");
  }
  if (at < 0 || (message.statement ?? "") !== offered.slice(0, at)) {
    throw new SiweError("The message's statement is not the one this site asked you to sign; start again");
  }
  let signer: `0x${string}`;
  try {
    signer = await recoverMessageAddress({ message: request.message, signature: request.signature as `0x${string}` });
  } catch {
    throw new SiweError("The signature is not valid");
  }
  if (!isAddressEqual(signer, message.address)) throw new SiweError("The signature is not from the message's wallet");
  return getAddress(signer);
}
