import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { ApiError } from "../../core/http/errors.ts";
import { caip2 } from "../../core/money/network-table.ts";
import { channelObjectName } from "../../core/sessions/channel-storage.ts";
import type { ForwardResult, Served, ServeRequest } from "../../core/sessions/serve.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { openAnswer, requestFingerprint, sealAnswer } from "../paid-answer.ts";
import { type Forwarded, forward } from "../pipeline/forward.ts";
import { go, type Outcome, type PaymentInput, refuse, type Step } from "../pipeline/method.ts";
import { findTarget, upstreamParts } from "../target.ts";
import type { UpstreamParts } from "../upstream/request.ts";
import { BATCH_SETTLEMENT, PAYMENT_RESPONSE, paymentRequiredResponse, paymentResponseHeader, type X402Session } from "./sdk.ts";

// x402 `batch-settlement` (docs/sessions.md): a buyer's deposit, vouchers and refund, each paid on its channel's
// Durable Object in ONE call (`ChannelObject.serve`, src/core/sessions/): the scheme verifies and reserves there,
// calls back `forward` (the upstream, from this isolate), and commits the charge only when the upstream answered
// below 400. Nothing on this path writes D1; a voucher asks no facilitator and no chain.

type Raw = { voucher?: { channelId?: unknown; maxClaimableAmount?: unknown }; deposit?: { amount?: unknown } };

/** What a kept answer is sealed to (with the tenant): the channel and the cumulative charge its voucher signed. */
const keptId = (paid: { channelId: string; cumulative: string }) => `${paid.channelId}:${paid.cumulative}`;

const pathOf = (url: unknown) => (typeof url === "string" && URL.canParse(url) ? new URL(url).pathname : undefined);

/** A session payload matched to its paywall: where it pays, and what the upstream gets. */
interface SessionCall {
  target: PaymentTarget;
  session: X402Session;
  requirements: PaymentRequirements;
  channelId: string;
  /** The cumulative charge its voucher signs (micro-USDC). */
  cumulative: string;
  parts: UpstreamParts;
}

/**
 * A `batch-settlement` payload at the paywall's x402 payment URL: the paywall (404/405 as for `exact`), its session
 * requirement, then the channel's object serves it. `termsOf` is the paywall's x402 session (./exact.ts).
 */
export async function payBySession(
  input: PaymentInput,
  payload: PaymentPayload,
  offered: (t: PaymentTarget) => boolean,
  termsOf: (t: PaymentTarget) => Promise<X402Session>,
): Promise<Outcome> {
  const matched = await matchSession(input, payload, offered, termsOf);
  if (!matched.ok) return matched.stop;
  const paid = matched.value;
  let forwarded: Forwarded | undefined;
  const callUpstream = async (): Promise<ForwardResult> => {
    forwarded = await forward(input, paid.target, paid.parts, paid.channelId, paid.target.paywall.timeout);
    if (forwarded.kind !== "answer") return { status: forwarded.upstream.statusCode ?? 502, kept: null };
    const { answer } = forwarded;
    const kept = await sealAnswer(input.env, paid.target.paywall.tenantId, keptId(paid), answer);
    return { status: answer.status, kept: kept.sealed };
  };
  let served: Served;
  try {
    served = await serveOnChannel(input, payload, paid, callUpstream);
  } catch {
    return {
      kind: "error",
      error: new ApiError("BAD_GATEWAY", "The session's channel could not be reached; nothing was charged"),
    };
  }
  return answerOf(input, payload, paid, served, forwarded);
}

/** The paywall, its session requirement the payload matches, and the upstream request; else the refusal. */
async function matchSession(
  input: PaymentInput,
  payload: PaymentPayload,
  offered: (t: PaymentTarget) => boolean,
  termsOf: (t: PaymentTarget) => Promise<X402Session>,
): Promise<Step<SessionCall>> {
  const found = await findTarget(input.env, input.route, input.request.method, offered, "x402");
  if (!found.ok) return found;
  const target = found.value;
  const session = await termsOf(target);
  const refusal = async (reason: string) => refuse(await paymentRequiredResponse(session, reason, payload));
  if (!session.terms.sessions) return refusal("This paywall takes no session payments");
  if (pathOf(payload.resource?.url) !== pathOf(session.terms.resourceUrl)) {
    return refusal("The payment was made for another resource than this payment URL");
  }
  const requirements = session.server.findMatchingRequirements(session.requirements, payload);
  const raw = payload.payload as Raw;
  const channelId = typeof raw?.voucher?.channelId === "string" ? raw.voucher.channelId.toLowerCase() : "";
  const cumulative = typeof raw?.voucher?.maxClaimableAmount === "string" ? raw.voucher.maxClaimableAmount : "";
  if (
    payload.x402Version !== 2 ||
    requirements?.scheme !== BATCH_SETTLEMENT ||
    !/^0x[0-9a-f]{64}$/.test(channelId) ||
    !/^[0-9]{1,30}$/.test(cumulative) ||
    (raw.deposit !== undefined && !(typeof raw.deposit?.amount === "string" && /^[0-9]{1,30}$/.test(raw.deposit.amount)))
  ) {
    return refusal("The payment matches none of the accepted requirements");
  }
  const parts = await upstreamParts(input.env, target, input.request);
  if (!parts.ok) return parts;
  return go({ target, session, requirements, channelId, cumulative, parts: parts.value });
}

/** The one Durable Object call of a session payment: its channel's object serves it (src/core/sessions/serve.ts). */
async function serveOnChannel(
  input: PaymentInput,
  payload: PaymentPayload,
  { target, session, requirements, channelId }: SessionCall,
  callUpstream: () => Promise<ForwardResult>,
): Promise<Served> {
  const name = channelObjectName(requirements.network, requirements.payTo, channelId);
  const request: ServeRequest = {
    name,
    payload,
    requirements,
    facilitatorUrl: session.facilitator.ranked()[0] as string,
    meta: {
      tenantId: target.paywall.tenantId,
      paywallId: target.paywall.id,
      serviceId: target.service.id,
      network: session.terms.offers.find((o) => caip2(o.entry) === requirements.network)?.network ?? "",
      currency: "USDC",
    },
    fingerprint: await requestFingerprint(input.request.method, input.request.url, input.request.body),
  };
  return (await input.env.CHANNELS.getByName(name).serve(request, callUpstream)) as Served;
}

/** The buyer's answer to what the channel's object did. */
async function answerOf(
  input: PaymentInput,
  payload: PaymentPayload,
  paid: SessionCall,
  served: Served,
  forwarded: Forwarded | undefined,
): Promise<Outcome> {
  const receipt = (settle: SettleResponse) => paymentResponseHeader(paid.session, settle);
  switch (served.kind) {
    case "answered": {
      if (forwarded?.kind !== "answer")
        return { kind: "error", error: new ApiError("BAD_GATEWAY", "The upstream's answer was lost") };
      const { answer } = forwarded;
      answer.headers.set(PAYMENT_RESPONSE, receipt(served.settle));
      return { kind: "answer", response: new Response(answer.body, { status: answer.status, headers: answer.headers }) };
    }
    case "unpaid":
      return forwarded?.kind === "unpaid"
        ? forwarded.outcome
        : { kind: "error", error: new ApiError("BAD_GATEWAY", "The upstream could not be reached; the payment was not charged") };
    case "kept":
      return keptAnswer(input, paid, served.kept, receipt(served.settle));
    case "refunded": {
      const headers = { [PAYMENT_RESPONSE]: receipt(served.settle), "Cache-Control": "no-store" };
      return { kind: "answer", response: Response.json(served.body, { headers }) };
    }
    case "refused": {
      const corrected = served.accepts;
      const accepts = corrected
        ? paid.session.requirements.map((r) => (r.scheme === corrected.scheme && r.network === corrected.network ? corrected : r))
        : undefined;
      return refuse(await paymentRequiredResponse(paid.session, served.reason, payload, accepts)).stop;
    }
  }
}

/** The answer a voucher already paid for, opened for the same request sent again. */
async function keptAnswer(input: PaymentInput, paid: SessionCall, kept: string | null, receipt: string): Promise<Outcome> {
  if (kept === null) {
    const error = new ApiError("CONFLICT", "This voucher already paid for this request; its answer was too large to keep");
    return { kind: "error", error };
  }
  const answer = await openAnswer(input.env, paid.target.paywall.tenantId, keptId(paid), kept);
  const headers = new Headers(answer.headers);
  headers.set(PAYMENT_RESPONSE, receipt);
  return { kind: "answer", response: new Response(answer.body, { status: answer.status, headers }) };
}
