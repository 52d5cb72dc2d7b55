// The MPP challenge header the gateway writes for terms it has built one challenge for: the first header with a new
// expiry and its HMAC id. Each must be exactly the header mppx itself writes for those fields (`Challenge.from` with
// the secret, then `serialize`), and verify under mppx's own `Challenge.verify`, which every credential goes through.
import { Challenge } from "mppx";
import { describe, expect, it } from "vitest";
import { challengeHeader, type MppTerms } from "../../src/gateway/mpp/sdk.ts";
import { useTestClock } from "../support/clock.ts";

const terms = (overrides: Partial<MppTerms> = {}): MppTerms => ({
  secret: "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
  amount: "10000",
  currency: "0x20c0000000000000000000000000000000000001",
  recipient: "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00",
  chainId: 42431,
  rpcUrl: "https://rpc.tempo.example",
  testnet: true,
  realm: "pay.example.com",
  description: 'Forecast — “quoted” \\ and "escaped"',
  scope: "pw_123",
  validitySeconds: 300,
  ...overrides,
});

/** What mppx writes for the challenge a header names, rebuilt from its fields with the secret. */
function mppxHeaderFor(header: string, secret: string): string {
  const { id: _id, ...fields } = Challenge.deserialize(header);
  return Challenge.serialize(Challenge.from({ ...fields, secretKey: secret }));
}

describe("MPP challenge headers after the first for the same terms", () => {
  it.each([
    ["one terms object", terms()],
    ["a description with nothing to escape, mainnet", terms({ description: "Tides", testnet: false, chainId: 4217 })],
  ])("%s: each is the header mppx writes for its expiry, verifies with the secret, and is its own", async (_, t) => {
    const clock = useTestClock(Date.parse("2026-11-27T12:00:00.000Z"));
    const first = await challengeHeader(t);
    const seen = new Set([first]);
    for (const step of [1, 999, 60_000, 3_600_000 + 7]) {
      clock.advance(step);
      const header = await challengeHeader(t);
      expect(header).toBe(mppxHeaderFor(header, t.secret));
      const challenge = Challenge.deserialize(header);
      expect(Challenge.verify(challenge, { secretKey: t.secret })).toBe(true);
      expect(Challenge.verify(challenge, { secretKey: `${t.secret}x` })).toBe(false);
      expect(challenge.expires).toBe(new Date(clock.now() + t.validitySeconds * 1000).toISOString());
      // Everything else is the first challenge's.
      const { id: _a, expires: _b, ...rest } = challenge;
      const { id: _c, expires: _d, ...firstRest } = Challenge.deserialize(first);
      expect(rest).toEqual(firstRest);
      expect(seen.has(header)).toBe(false);
      seen.add(header);
    }
  });

  it("another terms object (a new price) gets a challenge of its own terms", async () => {
    useTestClock(Date.parse("2026-11-27T12:00:00.000Z"));
    const before = terms();
    await challengeHeader(before);
    await challengeHeader(before);
    const after = terms({ amount: "20000" });
    const header = await challengeHeader(after);
    expect(header).toBe(mppxHeaderFor(header, after.secret));
    const request = Challenge.deserialize(header).request as { amount: string };
    expect(request.amount).toBe("20000");
  });
});
