// Inside workerd: mppx's server (as the gateway runs it) verifies and settles a tempo charge against the local Tempo
// chain reached through https://tempo-rpc.gateway.test, paid by mppx's client.
import { Receipt } from "mppx";
import { Mppx, tempo } from "mppx/server";
import { createClient, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { tempoModerato } from "viem/chains";
import { Actions } from "viem/tempo";
import { describe, expect, inject, it } from "vitest";
import { createMppBuyer } from "../../../src/cli/localnet/mpp-buyer.ts";

const net = inject("localnet");
const RPC = "https://tempo-rpc.gateway.test";

describe("MPP wiring inside workerd", () => {
  it("challenge → credential → receipt; the recipient gains exactly the amount", async () => {
    const local = net.tempo!;
    const chain = { ...tempoModerato, id: local.chainId, rpcUrls: { default: { http: [RPC] } } };
    const getClient = () => createClient({ chain, transport: http(RPC, { retryCount: 0 }) });
    const recipient = privateKeyToAddress(generatePrivateKey());
    const mppx = Mppx.create({
      methods: [tempo.charge({ currency: local.currency, recipient, decimals: 6, testnet: true, getClient })],
      secretKey: "workerd-wiring-mpp-secret-0123456789abcdef",
      realm: "wiring.test",
    });
    const handle = async (request: Request) => {
      const result = await mppx.charge({ amount: "0.25" })(request);
      return result.status === 402 ? result.challenge : result.withReceipt(new Response("paid"));
    };

    const challenge = await handle(new Request("https://pay.example.com/x"));
    expect(challenge.status).toBe(402);
    // The last pre-funded buyer: the Node tests take theirs from the front of the list.
    const buyer = createMppBuyer({ privateKey: local.buyers.at(-1)!.privateKey, rpcUrl: RPC, chainId: local.chainId });
    const credential = await buyer.mppx.createCredential(challenge);
    const paid = await handle(new Request("https://pay.example.com/x", { headers: { Authorization: credential } }));
    expect(paid.status).toBe(200);
    expect(Receipt.fromResponse(paid)).toMatchObject({ method: "tempo", status: "success" });
    const balance = await Actions.token.getBalance(getClient(), { token: local.currency, account: recipient });
    expect(balance.amount).toBe(250_000n);
  });
});
