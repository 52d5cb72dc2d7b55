import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ApiError } from "../../core/http/errors.ts";
import { caip2 } from "../../core/money/network-table.ts";
import { channelObjectName } from "../../core/sessions/channel-storage.ts";
import type { ForwardResult, Served } from "../../core/sessions/serve.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { openAnswer, requestFingerprint, sealAnswer } from "../paid-answer.ts";
import { type Forwarded, forward } from "../pipeline/forward.ts";
import { fail, type Outcome, type PaymentInput, refuse } from "../pipeline/method.ts";
import { findTarget, upstreamParts } from "../target.ts";
import { BATCH_SETTLEMENT, PAYMENT_RESPONSE, paymentRequiredResponse, paymentResponseHeader, type X402Session } from "./sdk.ts";

// x402 `batch-settlement` (docs/sessions.md): a buyer's deposit, vouchers and refund, each paid on its channel's
// Durable Object in ONE call (`ChannelObject.serve`, src/core/sessions/): the scheme verifies and reserves there,
// calls back `forward` (the upstream, from this isolate), and commits the charge only when the upstream answered
// below 400. Nothing on this path writes D1; a voucher asks no facilitator and no chain.

type Raw = { voucher?: { channelId?: unknown; maxClaimableAmount?: unknown } };

/** What a kept answer is sealed to: the tenant, the channel and the cumulative charge its voucher signed. */
const keptId = (channelId: string, cumulative: string) => `${channelId}:${cumulative}`;

const pathOf = (url: unknown) => (typeof url === "string" && URL.canParse(url) ? new URL(url).pathname : undefined);

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
  const found = await findTarget(input.env, input.route, input.request.method, offered, "x402");
  if (!found.ok) return found.stop;
  const target = found.value;
  const session = await termsOf(target);
  const refusal = async (reason: string, accepts?: PaymentRequirements[]) =>
    refuse(await paymentRequiredResponse(session, reason, payload, accepts));
  if (!session.terms.sessions) return (await refusal("This paywall takes no session payments")).stop;
  if (pathOf(payload.resource?.url) !== pathOf(session.terms.resourceUrl)) {
    return (await refusal("The payment was made for another resource than this payment URL")).stop;
  }
  const requirements = session.server.findMatchingRequirements(session.requirements, payload);
  const raw = payload.payload as Raw;
  const channelId = typeof raw?.voucher?.channelId === "string" ? raw.voucher.channelId.toLowerCase() : "";
  const cumulative = typeof raw?.voucher?.maxClaimableAmount === "string" ? raw.voucher.maxClaimableAmount : "";
  if (
    payload.x402Version !== 2 ||
    requirements?.scheme !== BATCH_SETTLEMENT ||
    !/^0x[0-9a-f]{64}$/.test(channelId) ||
    !/^[0-9]{1,30}$/.test(cumulative)
  ) {
    return (await refusal("The payment matches none of the accepted requirements")).stop;
  }
  const parts = await upstreamParts(input.env, target, input.request);
  if (!parts.ok) return parts.stop;

  const tenantId = target.paywall.tenantId;
  let forwarded: Forwarded | undefined;
  const callUpstream = async (): Promise<ForwardResult> => {
    forwarded = await forward(input, target, parts.value, channelId, target.paywall.timeout);
    if (forwarded.kind !== "answer") return { status: forwarded.upstream.statusCode ?? 502, kept: null };
    const { answer } = forwarded;
    const kept = await sealAnswer(input.env, tenantId, keptId(channelId, cumulative), answer);
    return { status: answer.status, kept: kept.sealed };
  };
  let served: Served;
  try {
    served = (await input.env.CHANNELS.getByName(channelObjectName(requirements.network, requirements.payTo, channelId)).serve(
      {
        name: channelObjectName(requirements.network, requirements.payTo, channelId),
        payload,
        requirements,
        facilitatorUrl: session.facilitator.ranked()[0] as string,
        meta: {
          tenantId,
          paywallId: target.paywall.id,
          serviceId: target.service.id,
          network: session.terms.offers.find((o) => caip2(o.entry) === requirements.network)?.network ?? "",
          currency: "USDC",
        },
        fingerprint: await requestFingerprint(input.request.method, input.request.url, input.request.body),
      },
      callUpstream,
    )) as Served;
  } catch {
    return fail(new ApiError("BAD_GATEWAY", "The session's channel could not be reached; nothing was charged")).stop;
  }
  const receipt = (settle: Parameters<typeof paymentResponseHeader>[1]) => paymentResponseHeader(session, settle);
  switch (served.kind) {
    case "answered": {
      if (forwarded?.kind !== "answer") return fail(new ApiError("BAD_GATEWAY", "The upstream's answer was lost")).stop;
      const { answer } = forwarded;
      answer.headers.set(PAYMENT_RESPONSE, receipt(served.settle));
      return { kind: "answer", response: new Response(answer.body, { status: answer.status, headers: answer.headers }) };
    }
    case "unpaid":
      return forwarded?.kind === "unpaid"
        ? forwarded.outcome
        : fail(new ApiError("BAD_GATEWAY", "The upstream could not be reached; the payment was not charged")).stop;
    case "kept": {
      if (served.kept === null) {
        return fail(new ApiError("CONFLICT", "This voucher was already used for this request; its answer was too large to keep"))
          .stop;
      }
      const answer = await openAnswer(input.env, tenantId, keptId(channelId, cumulative), served.kept);
      const headers = new Headers(answer.headers);
      headers.set(PAYMENT_RESPONSE, receipt(served.settle));
      return { kind: "answer", response: new Response(answer.body, { status: answer.status, headers }) };
    }
    case "refunded":
      return {
        kind: "answer",
        response: Response.json(served.body, {
          headers: { [PAYMENT_RESPONSE]: receipt(served.settle), "Cache-Control": "no-store" },
        }),
      };
    case "refused": {
      const corrected = served.accepts;
      const accepts = corrected
        ? session.requirements.map((r) => (r.scheme === corrected.scheme && r.network === corrected.network ? corrected : r))
        : undefined;
      return (await refusal(served.reason, accepts)).stop;
    }
  }
}
