// MPP on a local Tempo chain (anvil --network tempo), end to end with mppx's own client and server.
import { Challenge, Receipt } from "mppx";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalServer } from "../../src/cli/localnet/http-server.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { startTempoLocalnet, type TempoLocalnet } from "../../src/cli/localnet/tempo.ts";
import { startReferenceMppServer } from "./reference-mpp-server.ts";

let tempo: TempoLocalnet;
let server: LocalServer;
const recipient = privateKeyToAddress(generatePrivateKey());

beforeAll(async () => {
  tempo = await startTempoLocalnet();
  server = await startReferenceMppServer({
    rpcUrl: tempo.rpcUrl,
    chainId: tempo.chainId,
    currency: tempo.currency,
    recipient,
    amount: "0.01",
  });
});

afterAll(async () => {
  await server?.stop();
  await tempo?.stop();
});

let nextBuyer = 0;
/** A fresh funded account per payment (anvil mines one expiring-nonce transaction per account: see tempo.ts). */
const buyer = (mode?: "pull" | "push") =>
  createMppBuyer({ privateKey: tempo.buyers[nextBuyer++]!.privateKey, rpcUrl: tempo.rpcUrl, mode });

describe("MPP tempo charge on the local Tempo chain", () => {
  it("challenges with WWW-Authenticate: Payment that mppx decodes (tempo, charge, amount, currency, recipient)", async () => {
    const res = await fetch(`${server.url}/a`);
    expect(res.status).toBe(402);
    const challenge = Challenge.fromResponse(res);
    expect(challenge).toMatchObject({ method: "tempo", intent: "charge", realm: "reference.localnet" });
    expect(challenge.request).toMatchObject({ amount: "10000", currency: tempo.currency, recipient });
    expect((challenge.request as { methodDetails?: { chainId?: number } }).methodDetails?.chainId).toBe(42431);
  });

  for (const mode of ["pull", "push"] as const) {
    it(`pays in ${mode} mode: the receipt names the on-chain transfer, the recipient gains exactly the amount`, async () => {
      const before = await tempo.balanceOf(recipient);
      const res = await buyer(mode).fetch(`${server.url}/${mode}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`paid:/${mode}`);
      const receipt = Receipt.fromResponse(res);
      expect(receipt).toMatchObject({ method: "tempo", status: "success" });
      expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await tempo.balanceOf(recipient)).toBe(before + 10_000n);
    });
  }

  it("refuses a replayed credential and charges once", async () => {
    const b = buyer("pull");
    const challenge = await fetch(`${server.url}/replay`);
    const credential = await b.mppx.createCredential(challenge);
    const before = await tempo.balanceOf(recipient);
    const first = await fetch(`${server.url}/replay`, { headers: { Authorization: credential } });
    expect(first.status).toBe(200);
    const second = await fetch(`${server.url}/replay`, { headers: { Authorization: credential } });
    expect(second.status).toBe(402);
    expect(await tempo.balanceOf(recipient)).toBe(before + 10_000n);
  });
});
