import { keyRing } from "../core/config.ts";
import type { StoredAnswer } from "../core/ledger/ledger.ts";
import { decryptBytes, encryptBytes, secretAad } from "../core/secrets/secret-box.ts";
import { sha256Hex } from "../lib/ids.ts";

// A paid answer as the gateway keeps it for the same payment presented again (src/gateway/pipeline/known.ts): what the buyer
// was answered (status, headers, body), sealed with the key ring, and what request it answered.

/**
 * The largest answer body kept, per answer, on every paywall. A larger answer still reaches the buyer in full; the
 * payment then records that its answer was not kept, and presenting it again is answered `409 CONFLICT`
 * (`details.reason: "answer-not-kept"`) instead of the answer.
 */
export const MAX_KEPT_ANSWER_BYTES = 256 * 1024;

/** Platform headers on every answer to a recorded payment: its transaction id, and once settled, its settlement. */
export const TRANSACTION_ID_HEADER = "Payment-Transaction-Id";
export const SETTLEMENT_REFERENCE_HEADER = "Payment-Reference";

export interface AnswerParts {
  status: number;
  headers: Headers;
  body: ArrayBuffer | Uint8Array | null;
}

const bodyBytes = (body: AnswerParts["body"]) =>
  body === null ? new Uint8Array(0) : body instanceof Uint8Array ? body : new Uint8Array(body);

/**
 * An answer as bytes: one line of JSON (status and headers, each name with its value, in order, repeated names kept),
 * then the body as it was sent.
 */
export function encodeAnswer(answer: AnswerParts): Uint8Array<ArrayBuffer> {
  const head = new TextEncoder().encode(`${JSON.stringify({ status: answer.status, headers: [...answer.headers] })}\n`);
  const body = bodyBytes(answer.body);
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/** What `encodeAnswer` wrote. Throws when the bytes are not such an answer. */
export function decodeAnswer(bytes: Uint8Array<ArrayBuffer>): AnswerParts {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) throw new Error("not an encoded answer");
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline))) as {
    status: number;
    headers: [string, string][];
  };
  const headers = new Headers();
  for (const [name, value] of head.headers) headers.append(name, value);
  return { status: head.status, headers, body: bytes.slice(newline + 1) };
}

const aadOf = (tenantId: string, transactionId: string) => secretAad(tenantId, "paid_answers", transactionId, "answer");

/** The answer sealed for one tenant's payment; `sealed: null` when its body is over `MAX_KEPT_ANSWER_BYTES`. */
export async function sealAnswer(env: Env, tenantId: string, transactionId: string, answer: AnswerParts): Promise<StoredAnswer> {
  const at = new Date();
  if (bodyBytes(answer.body).byteLength > MAX_KEPT_ANSWER_BYTES) return { sealed: null, at };
  return { sealed: await encryptBytes(keyRing(env), encodeAnswer(answer), aadOf(tenantId, transactionId)), at };
}

/** A sealed answer opened: only with the tenant and transaction it was sealed for. */
export async function openAnswer(env: Env, tenantId: string, transactionId: string, sealed: string): Promise<AnswerParts> {
  return decodeAnswer(await decryptBytes(keyRing(env), sealed, aadOf(tenantId, transactionId)));
}

/**
 * What a payment pays for: method, path with query, and the body's SHA-256, hashed. The same credential for another
 * route, method, query or body is another request.
 */
export async function requestFingerprint(method: string, url: string, body: ArrayBuffer | undefined): Promise<string> {
  const { pathname, search } = new URL(url);
  const bodyHash = body ? await bytesSha256(body) : "";
  return sha256Hex(`${method}\n${pathname}${search}\n${bodyHash}`);
}

/** The SHA-256 of bytes, as hex. */
export async function bytesSha256(bytes: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * What proves a payment presented again comes from its buyer: SHA-256 of what only the buyer sent with it and the
 * chain never shows — `secret` (x402: the `payment-identifier`, else the challenge's own nonce the 402 named; MPP:
 * the challenge id) and the `Authorization` header it sent besides its payment (a `bearer-customer` buyer's own
 * bearer). `undefined` without a secret: such a payment's answer is never served again.
 */
export async function buyerProof(secret: string | undefined, authorization: string | undefined): Promise<string | undefined> {
  if (!secret) return undefined;
  return sha256Hex(`buyer-proof\n${secret}\n${authorization ?? ""}`);
}
