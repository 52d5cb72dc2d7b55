// A buyer who goes away after paying (the request is cancelled while the upstream works) does not leave the payment
// PENDING: the work after the PENDING record runs under waitUntil, so the upstream call, the settlement and the
// outcome's record still happen. The request goes through the Worker's real fetch handler (exports.default, whose
// environment is the test one: MPP, since its Tempo RPC is routed there), so the runtime cancels it as it cancels a
// client that disconnects.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { gatewayFetch, history, openShop, upstreamRequests, waitFor } from "./support.ts";
import { tempoBalanceOf as balanceOf, TEMPO_RPC as RPC, setTempoWallet, tempo } from "./tempo-support.ts";

describe("a request cancelled after the payment was recorded", () => {
  it("still settles and records its outcome: COMPLETED with the hash, the recipient paid once", async () => {
    const shop = await openShop({ networks: ["tempo-testnet"], price: "9100", route: "/hang/4000/echo" });
    const recipient = await setTempoWallet(shop.actor.tenant.id);
    const buyer = createMppBuyer({
      privateKey: tempo.buyers[0]!.privateKey,
      rpcUrl: RPC,
      chainId: tempo.chainId,
      fetch: gatewayFetch,
    });
    const credential = await buyer.mppx.createCredential(await gatewayFetch(shop.mpp as string));

    const abort = new AbortController();
    const paid = exports.default.fetch(
      new Request(shop.mpp as string, { headers: { Authorization: credential }, signal: abort.signal }),
    );
    await waitFor(async () => (await upstreamRequests(shop.prefix))[0]);
    abort.abort();
    await expect(paid).rejects.toThrow();
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });

    const settled = await waitFor(async () => {
      const [t] = (await history(shop)).transactions;
      return t?.status === "PENDING" ? undefined : t;
    });
    expect(settled).toMatchObject({ status: "COMPLETED", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await balanceOf(recipient)).toBe(9100n);
    expect((await history(shop)).events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
  }, 60_000); // the first MPP request loads mppx
});
