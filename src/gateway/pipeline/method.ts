import type { LoggedError } from "../../core/http/access-log.ts";
import type { ApiError } from "../../core/http/errors.ts";
import type { PendingPayment } from "../../core/ledger/ledger.ts";
import type { NetworkId } from "../../core/money/networks.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import type { KnownPayment } from "../../db/paid-answers.ts";

// The payment pipeline's vocabulary: what a transport hands it, what a payment method provides, what every step
// returns, and what the pipeline answers. Plain values only: no framework context comes in here.

/** The payment protocols, as the ledger records them. */
export type Protocol = "x402" | "mpp";

/**
 * A paid request as a transport hands it to the pipeline. `credential` is the payment as presented, wherever the
 * transport found it (an HTTP header, an MCP request's `_meta`); `undefined` when none was (the challenge).
 */
export interface PaymentInput {
  env: Env;
  /** The paywall asked for: its service and slug. */
  route: { serviceId: string; slug: string };
  /** The request the payment pays for, as the upstream will get it (its headers are the buyer's). */
  request: { method: string; url: string; headers: Headers; body: ArrayBuffer | undefined };
  credential: string | undefined;
  /** The client address the refused attempts are counted against (`undefined` when not known). */
  clientIp: string | undefined;
  /** Work that must finish after the answer was sent (the Workers `waitUntil`). */
  defer(work: Promise<unknown>): void;
  /** The transport when it is not the payment URL itself: an MCP tool call (recorded with the REQUEST event). */
  via?: RequestVia;
}

/** How a paid request reached the gateway other than at its payment URL: an MCP tool call, by the tool's name. */
export type RequestVia = { transport: "mcp"; tool: string };

/**
 * A refused attempt, answered with the standard's own answer (`402` with a fresh challenge: `by: "standard"`) or the
 * envelope (`409 CONFLICT` to the buyer of a known payment: `by: "conflict"`); counted against the client address.
 */
export type Refusal = { by: "standard"; answer: Response } | { by: "conflict"; error: ApiError };

/**
 * What the pipeline answers, for a transport to render: an `answer` (the upstream's, a kept one, a settlement's
 * refusal), the method's `challenge`, an `error` rendered by the envelope, or a `refused` attempt. `errorCode` is what
 * the request's log line names when it is more precise than the answer.
 */
export type Outcome =
  | { kind: "answer"; response: Response; errorCode?: LoggedError }
  | { kind: "challenge"; response: Response }
  | { kind: "error"; error: ApiError; errorCode?: LoggedError }
  | { kind: "refused"; refusal: Refusal };

/** What every step returns: its value, or the outcome that ends the pipeline there. */
export type Step<T> = { ok: true; value: T } | { ok: false; stop: Outcome };

export const go = <T>(value: T): Step<T> => ({ ok: true, value });
export const stop = (outcome: Outcome): { ok: false; stop: Outcome } => ({ ok: false, stop: outcome });
export const fail = (error: ApiError, errorCode?: LoggedError) =>
  stop({ kind: "error", error, ...(errorCode ? { errorCode } : {}) });
export const refuse = (answer: Response) => stop({ kind: "refused", refusal: { by: "standard", answer } });

/**
 * How a settlement ended: the money moved (`settled`, with the headers the standard adds to the answer), it did not
 * (`refused`, with the standard's answer), or nobody can tell yet (`unknown`: sent, then its answer was lost, and
 * the chain does not show it yet; `txHash` when the transaction's hash is known).
 */
export type Settlement =
  | { kind: "settled"; txHash: string; headers: Record<string, string> }
  | { kind: "refused"; reason: string; response: Response }
  | { kind: "unknown"; reason: string; txHash?: string };

/** A payment credential as presented, decoded locally: nothing here has been verified at a facilitator or a chain. */
export interface PresentedPayment {
  /** x402: the transaction id its payment has (payer, network and EIP-3009 nonce), when its network is known. */
  transactionId?: string;
  /** The retry key it carries (x402 `payment-identifier`, per payer; MPP: its challenge id). */
  paymentKey?: string;
  /** What identifies the credential itself (SHA-256 of the x402 signature; the MPP transaction's hash). */
  credential: string;
  /**
   * The earliest this credential, and any other under its retry key, can have been accepted (x402: its authorization's
   * `validBefore` less the longest validity the gateway accepts; MPP: when its challenge was issued, its `expires` less
   * the challenge's window). `undefined` when it cannot be told (an x402 `payment-identifier` may have been paid with an
   * older authorization).
   */
  since?: Date;
  /**
   * What only its buyer sent with it, never on chain (`buyerProof`): its answer is served again only to the same.
   * `undefined` when it carries no such secret.
   */
  proof?: string;
  /**
   * Whether `payer` signed this credential, checked locally (an EIP-712 signature recovered): a retry under a retry
   * key carries a new authorization. `false` when it cannot be told here (the payment is then verified as usual).
   */
  signedBy(payer: string): Promise<boolean>;
}

/** A payment verified by its method: who paid what, and the method's own state (`state`) to settle it with. */
export interface VerifiedPayment<State = unknown> {
  network: NetworkId;
  payer: string;
  /** What makes the payment unique (x402: the EIP-3009 nonce; MPP: the challenge id). */
  nonce: string;
  /** The retry key it may be presented again under with a new credential (x402 `payment-identifier`; MPP challenge id). */
  paymentKey?: string;
  /** What identifies the credential itself (see `PresentedPayment.credential`). */
  credential: string;
  /** Integer micro-units of the token. */
  amount: string;
  /**
   * Past this instant the money can no longer be moved (x402: the authorization's `validBefore`; MPP: the earlier of
   * the challenge's expiry and the transaction's `validBefore`).
   */
  expiresAt: Date;
  /** What settles the payment from the chain if this request cannot (stored with the PENDING transaction). */
  pending: PendingPayment;
  state: State;
}

/**
 * A payment method: what the pipeline asks of x402 `exact`, MPP `charge`, and any method after them. `Terms` is what
 * a paywall's offer is built into (a session, a challenge's terms); `Accepted` a credential matched to them locally;
 * `State` what the method keeps of a verified payment to settle it. Every answer is a value: a refusal is
 * `{ ok: false, stop }`, never thrown.
 */
export interface PaymentMethod<Terms = unknown, Accepted = unknown, State = unknown> {
  readonly protocol: Protocol;
  /** Its name in a refusal ("This paywall takes no x402 payments"). */
  readonly label: string;
  /** Kept free before the payment expires for `settle` to finish: the upstream call gets what remains. */
  readonly settleMarginMs: number;
  /** Whether the paywall offers this method (on one of its networks). */
  offeredBy(env: Env, target: PaymentTarget): boolean;
  /** The paywall's terms for this request (cached by the method as it sees fit). */
  terms(input: PaymentInput, target: PaymentTarget): Promise<Terms>;
  /** The `402` that asks for a payment. */
  challenge(terms: Terms): Promise<Response>;
  /** The credential read locally into plain values; `undefined` when it cannot be read. */
  present(input: PaymentInput, credential: string): Promise<PresentedPayment | undefined>;
  /**
   * A credential this method pays on a session instead of the pipeline (x402 `batch-settlement`): its outcome;
   * `undefined` for a credential the pipeline takes.
   */
  session?(input: PaymentInput, credential: string): Promise<Outcome | undefined>;
  /** The credential matched to the terms, locally (nothing asked of a facilitator or a chain). */
  accept(input: PaymentInput, terms: Terms, credential: string): Promise<Step<Accepted>>;
  /** The accepted credential verified (a facilitator, a chain's simulation): nothing moves yet. */
  verify(
    input: PaymentInput,
    target: PaymentTarget,
    terms: Terms,
    accepted: Accepted,
    presented: PresentedPayment | undefined,
  ): Promise<Step<VerifiedPayment<State>>>;
  /** Moves the money, now; when the outcome of that is unknown, asks the chain. A voucher method commits instead. */
  settle(input: PaymentInput, target: PaymentTarget, terms: Terms, payment: VerifiedPayment<State>): Promise<Settlement>;
  /** The standard's refusal of a verified payment (already used, expiring before the upstream could answer). */
  refusal(terms: Terms, payment: VerifiedPayment<State>, reason: string): Promise<Response>;
  /** The standard's settlement headers for a payment the sweep settled after its answer was stored. */
  receiptHeaders(env: Env, txHash: string, known: KnownPayment): Promise<Record<string, string>>;
}
