/**
 * `npm run buy`: pays the demo paywall of `npm run dev -- --payments` with the funded local buyer, over x402 with
 * `@x402/fetch`, and shows the upstream's answer, the settlement's transaction hash and the merchant's balance.
 * Optional argument: another payment URL on the same local chain (`npm run buy -- <url>`).
 *
 * `npm run buy -- --mpp`: the same over MPP on the local Tempo chain with mppx's client (pull mode: the buyer signs,
 * the gateway broadcasts after the upstream answered), each run with the next funded Tempo buyer (anvil's tempo mode
 * mines one expiring-nonce transaction per account: see tempo.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Challenge, Receipt } from "mppx";
import { createClient, createPublicClient, erc20Abi, formatUnits, type Hex, http } from "viem";
import { Actions } from "viem/tempo";
import { createX402Buyer, paymentResponseOf } from "./buyer.ts";
import { DEV_PAYMENTS_FILE, type DevPaymentsInfo } from "./dev-loop.ts";
import { createMppBuyer } from "./mpp-buyer.ts";
import { tempoChain } from "./tempo.ts";
import type { RecordedRequest } from "./upstream.ts";

const say = (text: string) => process.stdout.write(`${text}\n`);

let info: DevPaymentsInfo;
try {
  info = JSON.parse(readFileSync(DEV_PAYMENTS_FILE, "utf8")) as DevPaymentsInfo;
} catch {
  process.stderr.write("npm run buy: no local payment loop is running. Start it first: npm run dev -- --payments\n");
  process.exit(1);
}

const args = process.argv.slice(2);
const mppMode = args.includes("--mpp");
const url = args.find((a) => !a.startsWith("--")) ?? (mppMode ? (info.mpp?.paymentUrl ?? "") : info.paymentUrl);
if (mppMode) await buyOverMpp();

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
say(`  answer: ${body.length > 500 ? `${body.slice(0, 500)}…` : body}`);
const settled = paymentResponseOf(res);
if (!res.ok || !settled?.success) {
  say(`  not paid${settled?.errorReason ? `: ${settled.errorReason}` : ""}`);
  process.exit(1);
}
const receipt = await chain.getTransactionReceipt({ hash: settled.transaction as Hex });
const after = await balance(info.merchantWallet);
say(`  transaction ${settled.transaction} (block ${receipt.blockNumber}, ${receipt.status})`);
say(`  merchant ${info.merchantWallet}: ${formatUnits(before, 6)} → ${formatUnits(after, 6)} USDC`);

await epilogue(res);

/** Where the answer came from: the edge cache (`X-Cache: HIT`, the upstream not called) or the upstream. */
async function epilogue(res: Response) {
  const cache = res.headers.get("x-cache");
  if (cache) say(`  X-Cache: ${cache}${res.headers.get("age") ? `, Age: ${res.headers.get("age")} s` : ""}`);
  const recorded = (await (await fetch(`${info.upstreamUrl}/__upstream/requests?prefix=/demo`)).json()) as RecordedRequest[];
  const last = recorded.at(-1);
  if (cache === "HIT") say("  answered from the edge cache: the upstream was not called for this purchase");
  else if (last) {
    const auth = last.headers.authorization ? `${last.headers.authorization.split(" ")[0]} ***` : "(none)";
    say(`  the upstream received ${last.method} ${last.path} with Authorization: ${auth} (injected by the gateway)`);
  }
  say("");
  say("The transaction and its events, with a key of the demo tenant:");
  say(`  curl -H "Authorization: Bearer <key>" ${info.apiBase}/v1/transactions`);
  say(`  curl -H "Authorization: Bearer <key>" ${info.apiBase}/v1/events`);
}

async function buyOverMpp(): Promise<never> {
  const mpp = info.mpp;
  if (!mpp || !url) {
    process.stderr.write("npm run buy -- --mpp: this payment loop runs no Tempo chain\n");
    process.exit(1);
  }
  // The next unused funded buyer (a counter next to the loop's file).
  const counterFile = `${DEV_PAYMENTS_FILE}.mpp-buyers-used`;
  let used = 0;
  try {
    used = Number(readFileSync(counterFile, "utf8")) || 0;
  } catch {}
  const privateKey = mpp.buyerPrivateKeys[used] as Hex | undefined;
  if (!privateKey) {
    process.stderr.write(
      `npm run buy -- --mpp: all ${mpp.buyerPrivateKeys.length} funded Tempo buyers are used; restart the loop\n`,
    );
    process.exit(1);
  }
  writeFileSync(counterFile, String(used + 1));
  const tempo = createClient({ chain: tempoChain(mpp.chainId, mpp.rpcUrl), transport: http(mpp.rpcUrl) });
  const balance = async (address: string) =>
    (await Actions.token.getBalance(tempo, { token: mpp.currency as Hex, account: address as Hex })).amount;
  const buyer = createMppBuyer({ privateKey, rpcUrl: mpp.rpcUrl, chainId: mpp.chainId });
  const challenge = Challenge.fromResponse(await fetch(url));
  const recipient = (challenge.request as { recipient: string }).recipient;
  const before = await balance(recipient);
  say(`Buying ${url} over MPP (tempo charge, pull mode)`);
  say(`  buyer ${buyer.address} (funded Tempo buyer #${used + 1}), price ${formatUnits(BigInt(info.price), 6)} pathUSD`);
  const started = Date.now();
  const res = await buyer.fetch(url);
  const body = await res.text();
  say(`  HTTP ${res.status} in ${Date.now() - started} ms`);
  say(`  answer: ${body.length > 500 ? `${body.slice(0, 500)}…` : body}`);
  if (!res.ok || !res.headers.get("payment-receipt")) {
    say("  not paid");
    process.exit(1);
  }
  const receipt = Receipt.fromResponse(res);
  say(`  transaction ${receipt.reference} (${receipt.status})`);
  say(`  recipient ${recipient}: ${formatUnits(before, 6)} → ${formatUnits(await balance(recipient), 6)} pathUSD`);
  await epilogue(res);
  process.exit(0);
}
