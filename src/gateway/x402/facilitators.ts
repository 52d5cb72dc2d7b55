import { waitUntil } from "cloudflare:workers";
import type { HTTPFacilitatorClient } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedKind, VerifyResponse } from "@x402/core/types";
import { rankedFacilitators, reportOutcome } from "../../core/facilitators/health.ts";
import type { Mode } from "../../db/schema.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import type { CallFailure } from "../../lib/facilitator-health.ts";

type Lib = typeof import("./lib.ts");

export interface FacilitatorChoice {
  env: Env;
  mode: Mode;
  verifyTimeoutMs: number;
  settleTimeoutMs: number;
}

const background = { waitUntil };

const nonceOf = (payload: PaymentPayload): string =>
  String((payload.payload as { authorization?: { nonce?: unknown } }).authorization?.nonce ?? "").toLowerCase();

/**
 * The paywall's facilitators, as one `FacilitatorClient` for `@x402/core`'s resource server (docs/gateway.md,
 * "Facilitators"). The kinds it answers are the paywall's own networks: the 402 challenge needs no facilitator round
 * trip (the `exact` EVM scheme takes nothing from a supported kind).
 *
 * - `verify` asks the facilitators in the order their health gives, each within the verify timeout, and moves on
 *   from one that does not answer (timeout, connection failure, a 5xx, an answer that is not a verify response). An
 *   answer, valid or not, is the verdict.
 * - `settle` asks one facilitator only: the one `settleAt` names for the payment (by default the one that verified
 *   it). Moving on to another is the flow's decision, made from the chain (src/gateway/x402/exact.ts).
 *
 * Every call's outcome (answered or how it failed, and its duration) is reported to the mode's health.
 */
export class FailoverFacilitator implements FacilitatorClient {
  private readonly clients = new Map<string, { verify: HTTPFacilitatorClient; settle: HTTPFacilitatorClient }>();
  /** Payment nonce → the facilitator its settlement goes to next. */
  private readonly chosen = new BoundedCache<string>(2048, () => 1);

  private readonly sdk: Lib;
  private readonly choice: FacilitatorChoice;
  private readonly kinds: SupportedKind[];

  constructor(sdk: Lib, choice: FacilitatorChoice, kinds: SupportedKind[]) {
    this.sdk = sdk;
    this.choice = choice;
    this.kinds = kinds;
  }

  /** The mode's facilitators, healthiest first. */
  ranked(): string[] {
    return rankedFacilitators(this.choice.env, background, this.choice.mode);
  }

  /** The facilitators to settle a payment at, in order: the one that verified it first. */
  settleOrder(payload: PaymentPayload): string[] {
    const first = this.chosen.get(nonceOf(payload));
    const ranked = this.ranked();
    return first && ranked.includes(first) ? [first, ...ranked.filter((u) => u !== first)] : ranked;
  }

  /** The next `settle` of this payment goes to `url`. */
  settleAt(payload: PaymentPayload, url: string): void {
    this.chosen.set(nonceOf(payload), url);
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    let lastError: unknown;
    for (const url of this.ranked()) {
      const started = Date.now();
      try {
        const result = await this.client(url).verify.verify(payload, requirements);
        this.report(url, started);
        this.settleAt(payload, url);
        return result;
      } catch (err) {
        const failure = this.failureOf(err);
        this.report(url, started, failure);
        if (!failure) throw err; // a verdict in a 4xx: the payment's, not the facilitator's
        lastError = err;
      }
    }
    throw lastError;
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const url = this.chosen.get(nonceOf(payload)) ?? (this.ranked()[0] as string);
    const started = Date.now();
    try {
      const result = await this.client(url).settle.settle(payload, requirements);
      this.report(url, started);
      return result;
    } catch (err) {
      this.report(url, started, this.failureOf(err));
      throw err;
    }
  }

  getSupported() {
    return Promise.resolve({ kinds: this.kinds, extensions: [], signers: {} });
  }

  private client(url: string) {
    let client = this.clients.get(url);
    if (!client) {
      client = {
        verify: new this.sdk.HTTPFacilitatorClient({ url, timeoutMs: this.choice.verifyTimeoutMs }),
        settle: new this.sdk.HTTPFacilitatorClient({ url, timeoutMs: this.choice.settleTimeoutMs }),
      };
      this.clients.set(url, client);
    }
    return client;
  }

  /** How a call failed; `undefined` when the facilitator did answer (a verdict sent with a 4xx status). */
  private failureOf(err: unknown): CallFailure | undefined {
    const { sdk } = this;
    if (err instanceof sdk.FacilitatorTimeoutError) return "timeout";
    if (err instanceof sdk.FacilitatorResponseError) return "invalid_answer";
    if (err instanceof sdk.VerifyError || err instanceof sdk.SettleError) {
      return err.statusCode >= 500 ? "error_status" : undefined;
    }
    if (err instanceof Error && /^Facilitator (verify|settle) failed \(\d+\)/.test(err.message)) return "error_status";
    return "unreachable";
  }

  private report(url: string, started: number, failure?: CallFailure): void {
    const at = Date.now();
    reportOutcome(this.choice.env, background, this.choice.mode, {
      url,
      at,
      ms: at - started,
      ...(failure ? { failure } : {}),
    });
  }
}
