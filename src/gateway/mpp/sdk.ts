import { formatUnits } from "viem/utils";
import { ApiError } from "../../core/http/errors.ts";
import { paymentRetryKey } from "../../core/ledger/ids.ts";
import { VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import { encodeBase64Url } from "../../lib/base64.ts";
import { buyerProof } from "../paid-answer.ts";
import { fail, go, type PresentedPayment, refuse, type Step } from "../pipeline/method.ts";

/**
 * The MPP side of the gateway, built from mppx's own server (`Mppx.create` with its tempo `charge` method): mppx
 * issues the challenge (later ones for the same terms are its header with a new expiry and id: `ChallengeTemplate`),
 * checks a credential against it and broadcasts it.
 *
 * The charge is split the way mppx's server allows: `validate` (the challenge's HMAC, expiry and binding to this
 * paywall, the signed transaction's transfer call — amount, currency, recipient, the challenge-bound memo — and an
 * `eth_call` simulation; nothing is sent) before the upstream call, `broadcast` (re-validate, send, wait for the
 * receipt) only after the upstream answered below 400. So an upstream failure never charges the buyer.
 *
 * Only `pull` mode is offered (`supportedModes: ["pull"]` in the challenge, which the HMAC binds): the buyer signs
 * the transaction and the gateway sends it. A `push` credential (`{ type: "hash" }`) names a transaction the buyer
 * already broadcast, i.e. money already moved before the upstream answered, which this gateway never accepts; mppx's
 * client does not produce one for a pull-only challenge, and one made by hand is refused with a 402.
 */
export interface MppTerms {
  /** HMAC secret binding the challenge id to its contents (the Worker's ENCRYPTION_KEY). */
  secret: string;
  /** Integer micro-USDC. */
  amount: string;
  currency: `0x${string}`;
  recipient: string;
  chainId: number;
  /** The chain's JSON-RPC endpoint (the network table's `rpcUrl`). */
  rpcUrl: string;
  testnet: boolean;
  realm: string;
  description: string;
  /** The paywall the challenge is for: carried (HMAC-bound) in the challenge, checked on the credential. */
  scope: string;
  /** Seconds the challenge stays valid. */
  validitySeconds: number;
}

const mppx = () => import("./lib.ts");
type Lib = Awaited<ReturnType<typeof mppx>>;

/**
 * Set once the signed transaction was handed to the chain's RPC and the node did not refuse it: from then on its
 * outcome is the chain's. A JSON-RPC error answer to the send (the node refused the transaction: nonce, balance,
 * expired) clears it again: the money did not move. Only a transport failure or a timeout after sending leaves it
 * set (the answer was lost), and so does a refusal that says the node already has the transaction or that the
 * synchronous send timed out waiting for its receipt (EIP-7966 code 4).
 */
interface SendWatch {
  submitted: boolean;
}

/** A JSON-RPC error answer to a send that means the node refused the transaction (it is not in its pool). */
function nodeRefusedSend(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name !== "RpcRequestError") continue;
    const { code } = e as Error & { code?: number };
    return code !== 4 && !/already known|known transaction|timed? ?out/i.test(e.message);
  }
  return false;
}

/** The RPC transport, noting in `watch` when a raw transaction is sent through it (and not refused). */
function watchedTransport(lib: Lib, rpcUrl: string, watch?: SendWatch): ReturnType<Lib["http"]> {
  const transport = lib.http(rpcUrl, { retryCount: 0 });
  if (!watch) return transport;
  return (options) => {
    const t = transport(options);
    return {
      ...t,
      request: (args, requestOptions) => {
        if (!args.method.startsWith("eth_sendRawTransaction")) return t.request(args, requestOptions);
        watch.submitted = true;
        return t.request(args, requestOptions).catch((err: unknown) => {
          if (nodeRefusedSend(err)) watch.submitted = false;
          throw err;
        });
      },
    } as typeof t;
  };
}

/** mppx's server for one paywall's terms: the tempo charge in pull mode, its chain reached at `rpcUrl`. */
function serverFor(lib: Lib, terms: MppTerms, watch?: SendWatch) {
  const base = terms.testnet ? lib.tempoModerato : lib.tempoMainnet;
  const chain = { ...base, id: terms.chainId, rpcUrls: { default: { http: [terms.rpcUrl] } } };
  let client: ReturnType<Lib["createClient"]> | undefined;
  return lib.Mppx.create({
    methods: [
      lib.tempo.charge({
        currency: terms.currency,
        recipient: terms.recipient as `0x${string}`,
        decimals: 6,
        supportedModes: ["pull"],
        // One viem client per server (mppx asks for it on every challenge and credential).
        getClient: () => (client ??= lib.createClient({ chain, transport: watchedTransport(lib, terms.rpcUrl, watch) })),
      }),
    ],
    secretKey: terms.secret,
    realm: terms.realm,
  });
}

/**
 * The route's request: the schema takes the amount in whole units with `decimals`; the micro-USDC string is shifted
 * by viem's `formatUnits`, string arithmetic on a bigint (no floating point), and the wire carries the atomic amount.
 */
const routeRequest = (terms: MppTerms) => ({ amount: formatUnits(BigInt(terms.amount), 6), chainId: terms.chainId });

const NO_STORE = { "Cache-Control": "no-store" };

/** How far past the challenge's expiry a transaction's `validBefore` may reach (the clocks of buyer and gateway). */
const VALID_BEFORE_SKEW_MS = 5_000;

/**
 * Per terms object (the flow keeps one per paywall state, src/gateway/mpp/charge.ts): the first challenge mppx's server
 * built for them, serialized by mppx, and what makes a later challenge for the same terms its own. Only two values
 * differ from one challenge to the next: its expiry, and its id, which the MPP specification defines as the
 * HMAC-SHA256, keyed with the server's secret, of the challenge's seven pipe-joined binding slots (realm, method,
 * intent, request, expires, digest, opaque: mppx's `Challenge.verify` recomputes it on every credential). A later
 * challenge is that header with those two values replaced, the id computed by the runtime's WebCrypto: the same
 * header mppx's `Challenge.from` and `serialize` would write for that expiry, which `test/payments/mpp-challenge.test.ts`
 * holds it to, for a fraction of the work (mppx's HMAC runs in JavaScript). A template goes when its terms do.
 */
interface ChallengeTemplate {
  /** `Challenge.serialize` of the first challenge. */
  header: string;
  /** Its id and expiry, as they appear in `header` (each exactly once, as quoted auth-params). */
  id: string;
  expires: string;
  /** The binding slots before the expiry (`realm|method|intent|request|`) and after it (`|digest|opaque`). */
  before: string;
  after: string;
  key: Promise<CryptoKey>;
}

const challengeTemplates = new WeakMap<MppTerms, ChallengeTemplate>();

/**
 * mppx writes characters above U+00FF of a quoted value (the description) as `\uXXXX`, which its parser reads back;
 * the Latin-1 letters it leaves as they are (é, ü) would make the header value non-ASCII, which HTTP stacks read as
 * they please: written the same way, the challenge is ASCII only. The description (already one line: see
 * `challengeDescription`) is the only value that can hold them.
 */
const latin1Escaped = (header: string) =>
  header.replace(/[\u0080-\u00ff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
const utf8 = new TextEncoder();

/** The `WWW-Authenticate` value of a new challenge for `terms`, valid `terms.validitySeconds` from now. */
export async function challengeHeader(terms: MppTerms): Promise<string> {
  const expires = new Date(Date.now() + terms.validitySeconds * 1000).toISOString();
  const template = challengeTemplates.get(terms);
  if (template) {
    const mac = await crypto.subtle.sign("HMAC", await template.key, utf8.encode(template.before + expires + template.after));
    return template.header
      .replace(`id="${template.id}"`, `id="${encodeBase64Url(new Uint8Array(mac))}"`)
      .replace(`, expires="${template.expires}"`, `, expires="${expires}"`);
  }
  // Loaded on the first MPP request only (./lib.ts): an isolate that answers the management API never evaluates mppx,
  // and evaluating it is most of an MPP challenge's first-request cost (test/bench/startup.ts).
  const lib = await mppx();
  const challenge = await serverFor(lib, terms).challenge.tempo.charge({
    ...routeRequest(terms),
    description: terms.description,
    scope: terms.scope,
    expires,
  });
  const header = latin1Escaped(lib.Challenge.serialize(challenge));
  // A challenge naming a credential header other than Authorization binds it in one more slot: none here does.
  if (challenge.header === undefined && challenge.expires !== undefined) {
    challengeTemplates.set(terms, {
      header,
      id: challenge.id,
      expires: challenge.expires,
      before: `${[challenge.realm, challenge.method, challenge.intent, lib.PaymentRequest.serialize(challenge.request)].join("|")}|`,
      after: ["", challenge.digest ?? "", challenge.opaque ?? ""].join("|"),
      key: crypto.subtle.importKey("raw", utf8.encode(terms.secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
    });
  }
  return header;
}

/** The MPP `402`: `WWW-Authenticate: Payment` with method `tempo`, intent `charge`, pull mode only. */
export async function mppChallenge(terms: MppTerms): Promise<Response> {
  return new Response(null, { status: 402, headers: { "WWW-Authenticate": await challengeHeader(terms), ...NO_STORE } });
}

/**
 * A refused credential, as mppx's HTTP transport answers it: `402` with a fresh challenge and an RFC 9457 problem
 * (`application/problem+json`) saying why.
 */
export async function mppRefusal(terms: MppTerms, reason: string | Error): Promise<Response> {
  const lib = await mppx();
  const error =
    reason instanceof lib.Errors.PaymentError
      ? reason
      : new lib.Errors.VerificationFailedError({ reason: typeof reason === "string" ? reason : "the payment is not valid" });
  const header = await challengeHeader(terms);
  const challengeId = /id="([^"]+)"/.exec(header)?.[1] ?? "";
  return new Response(JSON.stringify(error.toProblemDetails(challengeId)), {
    status: error.status ?? 402,
    headers: { "WWW-Authenticate": header, "Content-Type": "application/problem+json", ...NO_STORE },
  });
}

/** The `Payment-Receipt` of a payment whose transaction succeeded on chain (as mppx's tempo charge writes it). */
export async function mppReceiptHeader(txHash: string): Promise<string> {
  const lib = await mppx();
  return lib.Receipt.serialize({ method: "tempo", status: "success", reference: txHash, timestamp: new Date().toISOString() });
}

export interface ValidatedMpp {
  /** The challenge id: HMAC-bound to one issued challenge, and what makes this payment unique (one challenge, one payment). */
  challengeId: string;
  /** The transaction's sender. */
  payer: string;
  /** When the challenge expires: mppx refuses to broadcast after it. */
  expiresAt: Date;
  /** The hash the transaction has on chain once sent (known before it is sent). */
  txHash: `0x${string}`;
  /** Past this, no block can include the transaction: its own `validBefore` (never later than the challenge's expiry). */
  validBefore: Date;
  /** Sends the validated transaction and waits for its receipt; returns the hash and the `Payment-Receipt` value. */
  broadcast(): Promise<{ txHash: string; receiptHeader: string }>;
  /**
   * Whether `broadcast` handed the transaction to the RPC. When it threw after that (a timeout waiting for the
   * receipt, a dropped connection), the money may have moved: the chain decides, not the error.
   */
  submitted(): boolean;
}

/**
 * Checks a `Payment` credential against this paywall's terms without broadcasting anything. The standard's refusal
 * (a `402` with a fresh challenge) when it is not acceptable: malformed, not issued by us or not for this paywall,
 * expired, push mode, a transaction without a `validBefore` or one later than the challenge's expiry, or a transaction
 * that would not pay exactly these terms; and `502` when the chain's RPC did not answer (not the buyer's fault: no 402).
 */
export async function validateMpp(terms: MppTerms, authorization: string): Promise<Step<ValidatedMpp>> {
  const lib = await mppx();
  const refusal = async (reason: string | Error) => refuse(await mppRefusal(terms, reason));
  const scheme = lib.Credential.extractPaymentScheme(authorization);
  let credential: ReturnType<typeof lib.Credential.deserialize>;
  try {
    credential = lib.Credential.deserialize(scheme ?? "");
  } catch (err) {
    return refusal(err instanceof Error ? err : "The credential is not a valid MPP credential");
  }
  const payload = credential.payload as { type?: unknown } | undefined;
  if (payload?.type !== "transaction") {
    return refusal(
      payload?.type === "hash"
        ? "Push-mode (transaction hash) credentials are not accepted: pay in pull mode, the gateway broadcasts after the upstream answers"
        : "Only a signed transaction (pull mode) pays this charge",
    );
  }
  // The payer must not choose how long the payment stays open: its transaction expires with the challenge.
  // (mppx's server checks `validBefore` only for fee-payer transactions.)
  const expiresAt = new Date(credential.challenge.expires ?? 0);
  const { tempoTransactionFacts } = await import("./tempo-transaction.ts");
  let facts: Awaited<ReturnType<typeof tempoTransactionFacts>>;
  try {
    facts = await tempoTransactionFacts((payload as { signature: `0x${string}` }).signature);
  } catch {
    return refusal("The credential's transaction is not a signed Tempo transaction");
  }
  if (facts.validBefore === undefined || facts.validBefore * 1000 > expiresAt.getTime() + VALID_BEFORE_SKEW_MS) {
    return refusal("The transaction must expire (validBefore) no later than the challenge");
  }
  return validated(lib, terms, credential, { ...facts, validBefore: facts.validBefore }, expiresAt);
}

/** mppx's validation of the credential (a simulation: nothing is sent), and what broadcasts it later. */
async function validated(
  lib: Awaited<ReturnType<typeof mppx>>,
  terms: MppTerms,
  credential: ReturnType<Awaited<ReturnType<typeof mppx>>["Credential"]["deserialize"]>,
  facts: { hash: `0x${string}`; validBefore: number },
  expiresAt: Date,
): Promise<Step<ValidatedMpp>> {
  // One server validates now and broadcasts later; validation sends nothing, so `watch` notes only the broadcast.
  const watch: SendWatch = { submitted: false };
  const server = serverFor(lib, terms, watch);
  const options = { request: routeRequest(terms), realm: terms.realm, scope: terms.scope };
  let payer: string;
  try {
    const validation = await server.validateCredential(credential, options);
    payer = (validation.details as { sender?: string }).sender ?? "";
  } catch (err) {
    if (rpcUnreachable(err)) {
      return fail(
        new ApiError("BAD_GATEWAY", "The Tempo network could not be reached to validate the payment; nothing was charged"),
      );
    }
    return refuse(await mppRefusal(terms, err instanceof Error ? err : String(err)));
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(payer)) return refuse(await mppRefusal(terms, "The transaction names no sender"));
  return go({
    challengeId: credential.challenge.id,
    payer,
    expiresAt,
    txHash: facts.hash,
    validBefore: new Date(facts.validBefore * 1000),
    broadcast: async () => {
      const receipt = await server.broadcastCredential(credential, options);
      return { txHash: receipt.reference, receiptHeader: lib.Receipt.serialize(receipt) };
    },
    submitted: () => watch.submitted,
  });
}

/** viem's transport failures (no answer, or a non-JSON-RPC one), as opposed to the chain refusing the transaction. */
function rpcUnreachable(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name === "HttpRequestError" || e.name === "TimeoutError") return true;
  }
  return false;
}

/**
 * An `Authorization: Payment` credential as presented, decoded locally (no RPC, nothing verified): its challenge id
 * as the retry key (one challenge, one payment: mppx has no idempotency key of its own) and its transaction's hash;
 * `undefined` when it is not a pull-mode tempo credential. A new transaction for a challenge already paid cannot be
 * tied to its payer here (`signedBy` is `false`): it is validated by mppx as any credential, then answered as a retry.
 */
export async function presentedMpp(authorization: string): Promise<PresentedPayment | undefined> {
  const lib = await mppx();
  let credential: ReturnType<typeof lib.Credential.deserialize>;
  try {
    credential = lib.Credential.deserialize(lib.Credential.extractPaymentScheme(authorization) ?? "");
  } catch {
    return undefined;
  }
  const payload = credential.payload as { type?: unknown; signature?: unknown } | undefined;
  if (payload?.type !== "transaction" || typeof payload.signature !== "string" || !credential.challenge?.id) return undefined;
  const { tempoTransactionFacts } = await import("./tempo-transaction.ts");
  let hash: string;
  try {
    hash = (await tempoTransactionFacts(payload.signature as `0x${string}`)).hash;
  } catch {
    return undefined;
  }
  const expires = credential.challenge.expires ? Date.parse(credential.challenge.expires) : Number.NaN;
  return {
    paymentKey: await mppRetryKey(credential.challenge.id),
    credential: hash.toLowerCase(),
    // Its challenge (the retry key) was issued `VALIDITY_WINDOW_SECONDS` before it expires (./charge.ts).
    ...(Number.isFinite(expires) ? { since: new Date(expires - VALIDITY_WINDOW_SECONDS * 1000) } : {}),
    // The challenge id is the gateway's HMAC, in the credential only: the chain shows a hash of it at most (the memo).
    proof: await buyerProof(credential.challenge.id, undefined),
    signedBy: async () => false,
  };
}

export const mppRetryKey = (challengeId: string) => paymentRetryKey({ protocol: "mpp", challengeId });
