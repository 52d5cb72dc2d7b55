/**
 * `npm run buy`: pays the demo paywall of `npm run dev -- --payments` with the funded local buyer, over x402 with
 * `@x402/fetch`, and shows the upstream's answer, the settlement's transaction hash and the merchant's balance.
 * Optional argument: another payment URL on the same local chain (`npm run buy -- <url>`).
 *
 * `npm run buy -- --mpp`: the same over MPP on the local Tempo chain with mppx's client (pull mode: the buyer signs,
 * the gateway broadcasts after the upstream answered), each run with the next funded Tempo buyer (anvil's tempo mode
 * mines one expiring-nonce transaction per account: see tempo.ts).
 *
 * `npm run buy -- --session 100`: 100 calls in one x402 batch-settlement session (one deposit, then a voucher a
 * call), then waits for the gateway's settlement, asks for the rest of the deposit back, and prints every on-chain
 * transaction the session caused, what the merchant gained and what the buyer spent.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Challenge, Receipt } from "mppx";
import { type Abi, createClient, createPublicClient, decodeFunctionData, erc20Abi, formatUnits, type Hex, http } from "viem";
import { Actions } from "viem/tempo";
import { createX402Buyer, createX402SessionBuyer, paymentResponseOf } from "./buyer.ts";
import { loadArtifacts } from "./contracts.ts";
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
const sessionAt = args.indexOf("--session");
const sessionCalls = sessionAt >= 0 ? Number(args[sessionAt + 1]) : undefined;
if (sessionCalls !== undefined && !(Number.isInteger(sessionCalls) && sessionCalls > 0 && sessionCalls <= 10_000)) {
  process.stderr.write("npm run buy -- --session N: N is a whole number of calls, 1 to 10000\n");
  process.exit(1);
}
const url =
  args.find((a, i) => !a.startsWith("--") && !(sessionAt >= 0 && i === sessionAt + 1)) ??
  (mppMode ? (info.mpp?.paymentUrl ?? "") : info.paymentUrl);
if (mppMode) await buyOverMpp();
if (sessionCalls !== undefined) await buyInSession(sessionCalls);

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

/** A transaction's call by its function's name in the channel contract (`deposit`, `claimWithSignature`, …). */
function callName(input: Hex): string {
  try {
    const { functionName, args } = decodeFunctionData({ abi: loadArtifacts().BatchSettlement.abi as Abi, data: input });
    if (functionName !== "multicall") return functionName;
    return `multicall(${((args?.[0] ?? []) as Hex[]).map(callName).join(", ")})`;
  } catch {
    return input.slice(0, 10);
  }
}

async function buyInSession(calls: number): Promise<never> {
  const chain = createPublicClient({ transport: http(info.rpcUrl) });
  const usdc = info.usdc as Hex;
  const balance = (address: string) =>
    chain.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address as Hex] });
  const price = BigInt(info.price);
  const buyer = createX402SessionBuyer({
    privateKey: info.buyerPrivateKey as Hex,
    network: info.network as `eip155:${number}`,
    usdc,
    rpcUrl: info.rpcUrl,
    // More than the calls need, so the refund has a rest to return.
    deposit: (price * BigInt(calls) * 3n) / 2n,
  });
  const firstBlock = (await chain.getBlockNumber()) + 1n;
  const [buyerBefore, merchantBefore] = [await balance(buyer.address), await balance(info.merchantWallet)];
  say(`A session of ${calls} calls to ${url}`);
  say(`  buyer ${buyer.address}, price ${formatUnits(price, 6)} USDC a call`);
  const started = Date.now();
  let deposit: string | undefined;
  for (let i = 1; i <= calls; i++) {
    const res = await buyer.fetch(url);
    await res.arrayBuffer();
    const paid = paymentResponseOf(res);
    if (res.status !== 200 || !paid?.success) {
      say(`  call ${i}: HTTP ${res.status}${paid?.errorReason ? ` (${paid.errorReason})` : ""}: stopping`);
      process.exit(1);
    }
    if (paid.transaction) deposit = `${formatUnits(BigInt(paid.amount ?? "0"), 6)} USDC in ${paid.transaction}`;
  }
  const elapsed = Date.now() - started;
  say(`  ${calls} calls answered in ${elapsed} ms (${Math.round((calls * 1000) / elapsed)} calls/s)`);
  if (deposit) say(`  deposit: ${deposit}`);
  const owed = price * BigInt(calls);
  say(`  waiting for the gateway's settlement of ${formatUnits(owed, 6)} USDC to ${info.merchantWallet} …`);
  const waitFrom = Date.now();
  let merchantAfter = await balance(info.merchantWallet);
  while (merchantAfter - merchantBefore < owed && Date.now() - waitFrom < 60_000) {
    await new Promise((r) => setTimeout(r, 1_000));
    merchantAfter = await balance(info.merchantWallet);
  }
  const settledIn =
    merchantAfter - merchantBefore >= owed ? `${Math.round((Date.now() - waitFrom) / 1000)} s` : "not within 60 s";
  say(`  settled ${settledIn} after the last call`);
  const refund = await buyer.scheme.refund(url);
  say(
    `  refund: ${refund.success ? `${formatUnits(BigInt(refund.amount ?? "0"), 6)} USDC in ${refund.transaction}` : `refused (${refund.errorReason})`}`,
  );
  const lastBlock = await chain.getBlockNumber();
  say("");
  say("On-chain transactions the session caused:");
  for (let n = firstBlock; n <= lastBlock; n++) {
    const block = await chain.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) say(`  block ${n}: ${tx.hash} ${callName(tx.input)}`);
  }
  const buyerAfter = await balance(buyer.address);
  say("");
  say(
    `  merchant ${info.merchantWallet}: ${formatUnits(merchantBefore, 6)} → ${formatUnits(merchantAfter, 6)} USDC (+${formatUnits(merchantAfter - merchantBefore, 6)})`,
  );
  say(`  buyer spent ${formatUnits(buyerBefore - buyerAfter, 6)} USDC for ${calls} calls (${formatUnits(owed, 6)} owed)`);
  say("");
  say("The channel, with a key of the demo tenant:");
  say(`  curl -H "Authorization: Bearer <key>" ${info.apiBase}/v1/channels`);
  process.exit(buyerBefore - buyerAfter === owed && merchantAfter - merchantBefore === owed ? 0 : 1);
}
