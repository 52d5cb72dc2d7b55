import { Mppx, tempo } from "mppx/server";
import { formatUnits } from "viem";

export interface MppTerms {
  /** HMAC secret binding challenge ids (mppx requires ≥ 32 bytes; the Worker's ENCRYPTION_KEY is longer). */
  secret: string;
  /** Integer micro-USDC. */
  amount: string;
  currency: `0x${string}`;
  recipient: string;
  testnet: boolean;
  realm: string;
  description: string;
}

/**
 * The MPP `402`: `WWW-Authenticate: Payment` with method `tempo`, intent `charge`, built by mppx's own server.
 * mppx takes the amount in whole units with `decimals`; the micro-USDC string is shifted by viem's
 * `formatUnits`, which is string arithmetic on a bigint (no floating point).
 */
export async function mppChallenge(request: Request, terms: MppTerms): Promise<Response> {
  const mppx = Mppx.create({
    methods: [
      tempo.charge({
        currency: terms.currency,
        recipient: terms.recipient as `0x${string}`,
        decimals: 6,
        testnet: terms.testnet,
      }),
    ],
    secretKey: terms.secret,
    realm: terms.realm,
  });
  // Only the challenge is served here: a credential is not verified (see the README, "MPP").
  const probe = new Request(request.url, { method: request.method });
  const result = await mppx.charge({ amount: formatUnits(BigInt(terms.amount), 6), description: terms.description })(probe);
  if (result.status === 402) return result.challenge;
  throw new Error("mppx answered a request without a credential with something other than a challenge");
}
