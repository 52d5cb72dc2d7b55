import { formatUnits } from "viem/utils";

export interface MppTerms {
  /** HMAC secret binding the challenge id to its contents (the Worker's ENCRYPTION_KEY). */
  secret: string;
  /** Integer micro-USDC. */
  amount: string;
  currency: `0x${string}`;
  recipient: string;
  chainId: number;
  realm: string;
  description: string;
  /** Seconds the challenge stays valid. */
  validitySeconds: number;
}

/**
 * The MPP `402`: `WWW-Authenticate: Payment` with method `tempo`, intent `charge`, built and serialized by mppx's
 * own `Challenge.fromMethod` over its tempo `charge` method schema (the same code mppx's server runs, without
 * its MCP and HTML transports). The schema takes the amount in whole units with `decimals`; the micro-USDC string
 * is shifted by viem's `formatUnits`, string arithmetic on a bigint (no floating point), and the wire carries the
 * atomic amount again.
 */
export async function mppChallenge(terms: MppTerms): Promise<Response> {
  // Loaded on the first MPP request only: mppx's modules are large and, loaded eagerly, they end the test runtime's
  // isolate between test files (every later file of a run fails to start).
  const { Challenge, Methods } = await import("./mppx.ts");
  const challenge = Challenge.fromMethod(Methods.charge, {
    secretKey: terms.secret,
    realm: terms.realm,
    description: terms.description,
    expires: new Date(Date.now() + terms.validitySeconds * 1000).toISOString(),
    request: {
      amount: formatUnits(BigInt(terms.amount), 6),
      currency: terms.currency,
      decimals: 6,
      recipient: terms.recipient,
      chainId: terms.chainId,
    },
  });
  return new Response(null, {
    status: 402,
    headers: { "WWW-Authenticate": Challenge.serialize(challenge), "Cache-Control": "no-store" },
  });
}
