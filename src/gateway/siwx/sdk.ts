import { go, refuse, type Step } from "../pipeline/method.ts";
import { isIssuedNonce, issueNonce } from "./nonce.ts";

/**
 * Sign-In-With-X (CAIP-122, the x402 `sign-in-with-x` extension of `@x402/extensions`) for a service's `siwxRoutes`:
 * the challenge is an x402 402 with `accepts: []` and the extension, built by the SDK's resource server; a signed
 * answer is parsed, validated and verified by the SDK. The SDK binds a sign-in to the origin only and keeps no state,
 * so the gateway adds the rest (docs/discovery.md, "SIWX"):
 *
 * - the path: the signed `uri` must be this route's URL exactly (origin and path; the query is free);
 * - what was offered: the statement, the version, the resources (this route's URL only), an expiration no later than
 *   the challenge's and no `notBefore` or `requestId` (`unlikeOffer`): the wallet signs the challenge as given;
 * - issued nonces only: the nonce is HMAC-bound to that URI and the challenge's `issuedAt` (`nonce.ts`);
 * - single use: the nonce is claimed in D1 (`claim`), so a replayed header is refused;
 * - the chains of the service's networks only (EVM signatures, EIP-191; no on-chain call).
 *
 * The SDK is loaded with the first SIWX request (`lib.ts`).
 */

const siwxLib = () => import("./lib.ts");
type Lib = Awaited<ReturnType<typeof siwxLib>>;

export const SIWX_HEADER = "SIGN-IN-WITH-X";
/** How long a challenge may be answered: its `expirationTime`, and the oldest `issuedAt` accepted. */
export const SIWX_VALIDITY_SECONDS = 300;
/** Clock difference allowed between the wallet and the gateway, on top of the validity. */
const SKEW_MS = 60_000;

export interface SiwxTerms {
  /** The payment origin (`scheme://host[:port]`): the sign-in's domain. */
  origin: string;
  /** The route's URL on the payment origin, without query: what the signature must be for. */
  resourceUrl: string;
  /** CAIP-2 chains a wallet may sign for (the service's networks). */
  chains: string[];
  /** The statement the wallet signs. */
  statement: string;
  /** HMAC root for nonces (the Worker's ENCRYPTION_KEY). */
  secret: string;
}

export interface SignedIn {
  /** The wallet, as it signed (EIP-55). */
  address: string;
  chainId: string;
}

const NO_STORAGE = { hasPaid: () => false, recordPayment: () => {} };

/** One resource server per payment origin, with the SIWX extension registered (it fills in each challenge). */
const servers = new Map<string, Promise<InstanceType<Lib["x402ResourceServer"]>>>();

function serverFor(lib: Lib, origin: string) {
  let server = servers.get(origin);
  if (!server) {
    const s = new lib.x402ResourceServer([]);
    // Only the extension's challenge hook runs here (verification is `verifySiwx`'s): its storage is never asked.
    s.registerExtension(lib.createSIWxResourceServerExtension({ origin, storage: NO_STORAGE }));
    server = Promise.resolve(s);
    servers.set(origin, server);
  }
  return server;
}

/** The SIWX challenge: `402` with `PAYMENT-REQUIRED` (`accepts: []`, `extensions["sign-in-with-x"]`), a fresh nonce each time. */
export async function siwxChallenge(terms: SiwxTerms, error?: string): Promise<Response> {
  const lib = await siwxLib();
  const server = await serverFor(lib, terms.origin);
  const declared = lib.declareSIWxExtension({
    network: terms.chains as `${string}:${string}`[],
    statement: terms.statement,
    expirationSeconds: SIWX_VALIDITY_SECONDS,
  });
  const paymentRequired = await server.createPaymentRequiredResponse(
    [],
    { url: terms.resourceUrl, description: terms.statement, mimeType: "" },
    error ?? "Sign in with your wallet: answer the sign-in-with-x challenge in the SIGN-IN-WITH-X header",
    declared,
  );
  const extension = paymentRequired.extensions?.[lib.SIGN_IN_WITH_X] as {
    info: { uri: string; issuedAt: string; nonce: string };
  };
  extension.info.nonce = await issueNonce(terms.secret, extension.info.uri, extension.info.issuedAt);
  return Response.json(
    {},
    {
      status: 402,
      headers: { "PAYMENT-REQUIRED": lib.encodePaymentRequiredHeader(paymentRequired), "Cache-Control": "no-store" },
    },
  );
}

/** Slack for the challenge's `expirationTime`, which the SDK computes a moment after its `issuedAt`. */
const EXPIRY_SLACK_MS = 1_000;

/**
 * Why a signed sign-in differs from the challenge this route offers (its fields other than those checked elsewhere:
 * domain, uri, chain, nonce and `issuedAt`), or `null` when it matches.
 */
function unlikeOffer(
  terms: SiwxTerms,
  payload: {
    statement?: string;
    version: string;
    resources?: string[];
    issuedAt: string;
    expirationTime?: string;
    notBefore?: string;
    requestId?: string;
  },
): string | null {
  if (payload.statement !== terms.statement)
    return "The sign-in was signed over another statement than this route's challenge: sign the challenge as given";
  if (payload.version !== "1") return "The sign-in's version is not the challenge's (1)";
  if (payload.resources?.length !== 1 || payload.resources[0] !== terms.resourceUrl)
    return "The sign-in names other resources than this route's challenge";
  if (payload.notBefore !== undefined || payload.requestId !== undefined)
    return "The sign-in carries fields the challenge did not offer (notBefore, requestId)";
  const lasts = Date.parse(payload.expirationTime ?? "") - Date.parse(payload.issuedAt);
  if (!(lasts <= SIWX_VALIDITY_SECONDS * 1000 + EXPIRY_SLACK_MS))
    return `The sign-in must expire as the challenge does, ${SIWX_VALIDITY_SECONDS} s after it was issued`;
  return null;
}

/**
 * The wallet behind a `SIGN-IN-WITH-X` header, once: refused (a refusal carrying a fresh challenge and why)
 * unless it parses, is for this route, signs what the challenge offered, was issued here and is still valid, is signed by its address on an accepted
 * chain, and its nonce was never used (`claim` records it until it could no longer be accepted anyway).
 */
export async function verifySiwx(
  terms: SiwxTerms,
  header: string,
  claim: (nonce: string, expiresAt: Date) => Promise<boolean>,
): Promise<Step<SignedIn>> {
  const refusal = async (reason: string) => refuse(await siwxChallenge(terms, reason));
  const lib = await siwxLib();
  let payload: ReturnType<Lib["parseSIWxHeader"]>;
  try {
    payload = lib.parseSIWxHeader(header);
  } catch {
    return refusal("The SIGN-IN-WITH-X header is not a valid sign-in");
  }
  if (payload.uri !== terms.resourceUrl) return refusal("The sign-in was signed for another route: sign this route's challenge");
  const unlike = unlikeOffer(terms, payload);
  if (unlike) return refusal(unlike);
  const valid = await lib.validateSIWxMessage(payload, new URL(terms.origin), { maxAge: SIWX_VALIDITY_SECONDS * 1000 });
  if (!valid.isValid) return refusal(valid.invalidMessage ?? "The sign-in is not valid");
  if (!(await isIssuedNonce(terms.secret, payload.nonce, payload.uri, payload.issuedAt))) {
    return refusal("The sign-in's nonce was not issued by this gateway for this route: sign a fresh challenge");
  }
  if (!terms.chains.includes(payload.chainId)) return refusal(`Chain ${payload.chainId} is not accepted here`);
  const verified = await lib.verifySIWxSignature(payload);
  if (!verified.isValid) return refusal(verified.invalidMessage);
  const expiresAt = new Date(new Date(payload.issuedAt).getTime() + SIWX_VALIDITY_SECONDS * 1000 + SKEW_MS);
  if (!(await claim(payload.nonce, expiresAt))) return refusal("This sign-in was already used: sign a fresh challenge");
  return go({ address: verified.payer, chainId: payload.chainId });
}
