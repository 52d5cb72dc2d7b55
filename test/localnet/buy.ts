/**
 * `npm run buy`: pays the demo paywall of `npm run dev -- --payments` with the funded local buyer, over x402 with
 * `@x402/fetch`, and shows the upstream's answer, the settlement's transaction hash and the merchant's balance.
 * Optional argument: another payment URL on the same local chain (`npm run buy -- <url>`).
 */
import { readFileSync } from "node:fs";
import { createPublicClient, erc20Abi, formatUnits, type Hex, http } from "viem";
import { createX402Buyer, paymentResponseOf } from "./buyer.ts";
import { DEV_PAYMENTS_FILE, type DevPaymentsInfo } from "./dev-loop.ts";
import type { RecordedRequest } from "./upstream.ts";

const say = (text: string) => process.stdout.write(`${text}\n`);

let info: DevPaymentsInfo;
try {
  info = JSON.parse(readFileSync(DEV_PAYMENTS_FILE, "utf8")) as DevPaymentsInfo;
} catch {
  process.stderr.write("npm run buy: no local payment loop is running. Start it first: npm run dev -- --payments\n");
  process.exit(1);
}

const url = process.argv[2] ?? info.paymentUrl;
const chain = createPublicClient({ transport: http(info.rpcUrl) });
const usdc = info.usdc as Hex;
const balance = (address: string) =>
  chain.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address as Hex] });
const buyer = createX402Buyer({ privateKey: info.buyerPrivateKey as Hex, network: info.network as `eip155:${number}`, usdc });

const before = await balance(info.merchantWallet);
say(`Buying ${url}`);
say(`  buyer ${buyer.address}, price ${formatUnits(BigInt(info.price), 6)} USDC`);
const started = Date.now();
const res = await buyer.fetch(url);
const body = await res.text();
say(`  HTTP ${res.status} in ${Date.now() - started} ms`);
say(`  upstream answer: ${body.length > 500 ? `${body.slice(0, 500)}…` : body}`);
const settled = paymentResponseOf(res);
if (!res.ok || !settled?.success) {
  say(`  not paid${settled?.errorReason ? `: ${settled.errorReason}` : ""}`);
  process.exit(1);
}
const receipt = await chain.getTransactionReceipt({ hash: settled.transaction as Hex });
const after = await balance(info.merchantWallet);
say(`  transaction ${settled.transaction} (block ${receipt.blockNumber}, ${receipt.status})`);
say(`  merchant ${info.merchantWallet}: ${formatUnits(before, 6)} → ${formatUnits(after, 6)} USDC`);

const recorded = (await (await fetch(`${info.upstreamUrl}/__upstream/requests?prefix=/demo`)).json()) as RecordedRequest[];
const last = recorded.at(-1);
if (last) {
  const auth = last.headers.authorization ? `${last.headers.authorization.split(" ")[0]} ***` : "(none)";
  say(`  the upstream received ${last.method} ${last.path} with Authorization: ${auth} (injected by the gateway)`);
}
say("");
say("The transaction and its events, with a key of the demo tenant:");
say(`  curl -H "Authorization: Bearer <key>" ${info.apiBase}/v1/transactions`);
say(`  curl -H "Authorization: Bearer <key>" ${info.apiBase}/v1/events`);
