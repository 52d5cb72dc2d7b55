/**
 * A reference MPP resource server built only from mppx's own server (`Mppx.create` + `tempo.charge`), verifying
 * against a local Tempo chain: one paid route answering `paid:<path>` with a `Payment-Receipt`. It proves mppx's
 * challenge → credential → receipt flow works offline on anvil's tempo mode, and shows the one setting a server needs
 * for a local chain: `getClient` bound to the local RPC.
 */
import { Mppx, tempo } from "mppx/server";
import { createClient, http } from "viem";
import { type LocalServer, listen, readBody } from "../../src/cli/localnet/http-server.ts";
import { tempoChain } from "../../src/cli/localnet/tempo.ts";

export interface ReferenceMppServerOptions {
  rpcUrl: string;
  chainId: number;
  currency: `0x${string}`;
  recipient: `0x${string}`;
  /** Whole units as mppx takes them, e.g. "0.01" (= 10000 with 6 decimals). */
  amount: string;
}

export async function startReferenceMppServer(options: ReferenceMppServerOptions): Promise<LocalServer> {
  const chain = tempoChain(options.chainId, options.rpcUrl);
  const mppx = Mppx.create({
    methods: [
      tempo.charge({
        currency: options.currency,
        recipient: options.recipient,
        decimals: 6,
        testnet: true,
        getClient: () => createClient({ chain, transport: http(options.rpcUrl, { retryCount: 0 }) }),
      }),
    ],
    secretKey: "local-reference-mpp-secret-0123456789abcdef",
    realm: "reference.localnet",
  });
  return listen(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://reference.localnet");
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const body = await readBody(req);
    const request = new Request(url, { method: req.method, headers, body: body.length > 0 ? body : undefined });
    const result = await mppx.charge({ amount: options.amount, description: "reference" })(request);
    const response = result.status === 402 ? result.challenge : result.withReceipt(new Response(`paid:${url.pathname}`));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
}
