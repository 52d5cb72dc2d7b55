// A paid call whose Worker is killed: the production bundle in Miniflare, on persisted D1 and Durable Object storage
// and the local chains, has its runtime disposed while one step of a payment is held (x402: the facilitator's verify,
// the upstream call, the settlement before or after its transfer was sent, the record after the settlement; MPP: the
// broadcast before or after it was sent), then started again on the same state. After the Cron sweep and the buyer's resend of the same payment, either the buyer
// was not charged and no transaction is COMPLETED, or the buyer was charged exactly once, the payment has exactly one
// COMPLETED transaction and the resend gets the upstream's answer; the merchant's balance equals the ledger's total.
import { type Address, createPublicClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Buyer, paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "../../src/cli/localnet/outbound.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import { EXPIRY_MARGIN_MS } from "../../src/gateway/chain-outcome.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/sweep.ts";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";
import { stubService, workerApi } from "./bundle-support.ts";

const PORT = 8881;
const PRICE = "2500"; // 0.0025 USDC

let stack: LocalStack;
let worker: RunningWorker;
const merchant = privateKeyToAddress(generatePrivateKey());
let serviceId: string;

/** Where the payment is when the Worker is killed. */
type Step = "verify" | "upstream" | "settle-unsent" | "settle-sent" | "record" | "broadcast-unsent" | "broadcast-sent";

/** The step being held: its request is kept waiting (`reached` once it arrives) until the Worker is gone. */
let hold: { step: Step; reached: () => void; released: Promise<void>; release: () => void } | undefined;

function holdAt(step: Step): Promise<void> {
  return new Promise((reached) => {
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    hold = { step, reached, released, release };
  });
}

/** What the held step's request meets: its answer never comes (the Worker is killed meanwhile). */
async function held(): Promise<Response> {
  const h = hold as NonNullable<typeof hold>;
  h.reached();
  await h.released;
  return new Response("held until the Worker was killed", { status: 504 });
}

beforeAll(async () => {
  stack = await startStack();
  const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
  const router = createOutboundRouter({
    [GATEWAY_TEST_HOSTS.upstream]: stack.info.upstreamUrl,
    [GATEWAY_TEST_HOSTS.facilitator]: stack.info.facilitatorUrl,
    [GATEWAY_TEST_HOSTS.rpc]: stack.info.rpcUrl,
    [GATEWAY_TEST_HOSTS.tempoRpc]: tempo.rpcUrl,
  });
  worker = await startWorker({
    port: PORT,
    vars: {
      FACILITATOR_URL_TESTNET: `https://${GATEWAY_TEST_HOSTS.facilitator}`,
      NETWORK_OVERRIDES: stack.info.networkOverrides,
    },
    outboundService: async (request) => {
      const { hostname, pathname } = new URL(request.url);
      const facilitator = hostname === GATEWAY_TEST_HOSTS.facilitator;
      if (hold?.step === "verify" && facilitator && pathname.endsWith("/verify")) return held();
      if (hold?.step === "upstream" && hostname === GATEWAY_TEST_HOSTS.upstream) return held();
      if (hold?.step === "settle-unsent" && facilitator && pathname.endsWith("/settle")) return held();
      if (hold?.step === "settle-sent" && facilitator && pathname.endsWith("/settle")) {
        // The facilitator sends the transfer and waits for its receipt: the money moved, the answer never arrives.
        await (await router(request)).arrayBuffer();
        return held();
      }
      if (hold?.step.startsWith("broadcast") && hostname === GATEWAY_TEST_HOSTS.tempoRpc) {
        const sends = (await request.clone().text()).includes('"eth_sendRawTransaction');
        if (sends && hold.step === "broadcast-unsent") return held();
        if (sends) {
          await (await router(request)).arrayBuffer(); // sent and mined: the receipt's answer never arrives
          return held();
        }
      }
      return router(request);
    },
  });
  serviceId = await stubService(worker, stack, merchant, "Crash stub", "crash");
}, 240_000);

afterAll(async () => {
  hold?.release();
  await worker?.stop();
  await stack?.stop();
});

const api = workerApi(() => worker);

async function paywall(slug: string) {
  const created = await api("/v1/paywalls", {
    method: "POST",
    body: {
      slug,
      name: `Crash ${slug}`,
      targetType: "ROUTE",
      targetRoute: "/echo",
      serviceId,
      price: PRICE,
      currency: "USDC",
      networks: [stack.info.networkId, "tempo-testnet"],
      fulfillmentMode: "PROXY",
    },
  });
  expect(created.status).toBe(201);
  const urls = created.body.data.paymentUrls as Record<string, string>;
  return { id: created.body.data.id as string, url: urls.x402 as string, mpp: urls.mpp as string };
}

const transactionsOf = async (paywallId: string) =>
  (await api(`/v1/transactions?paywallId=${paywallId}`)).body.data as unknown as {
    status: string;
    txHash: string | null;
    amount: string;
  }[];

const usdcBalance = (address: string) =>
  createPublicClient({ transport: http(stack.info.rpcUrl) }).readContract({
    address: stack.info.usdc.address,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address as Address],
  });

/** A payment for the paywall's challenge, signed by x402's own client. */
async function signed(url: string) {
  const b = createX402Buyer({
    privateKey: stack.info.buyer.privateKey,
    network: stack.info.network,
    usdc: stack.info.usdc.address,
  });
  const challenge = await fetch(url);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
  const payload = await b.http.createPaymentPayload(required);
  const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore);
  return { header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string, validBefore };
}

/** The record of a COMPLETED payment made to fail (a trigger refuses it), so the settlement is never recorded. */
const RECORD_FAULT = "crash_refuse_completed";

async function crashAt(step: Step, slug: string) {
  const shop = await paywall(slug);
  const url = `${shop.url}?city=${slug}`;
  const buyerBefore = await usdcBalance(stack.info.buyer.address);
  const { header, validBefore } = await signed(url);
  const pay = () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });

  if (step === "record") {
    await (await worker.db())
      .prepare(
        `CREATE TRIGGER ${RECORD_FAULT} BEFORE UPDATE OF status ON transactions WHEN NEW.status = 'COMPLETED'
         BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
      )
      .run();
    const res = await pay();
    expect(res.status).toBe(500);
    await (await worker.db()).prepare(`DROP TRIGGER ${RECORD_FAULT}`).run();
    await worker.restart();
  } else {
    const reached = holdAt(step);
    const paid = pay().catch(() => undefined);
    await reached;
    await worker.restart(); // the Worker is killed with the step held, and started again on the same state
    hold?.release();
    hold = undefined;
    expect((await paid)?.status ?? "no answer").not.toBe(200);
  }

  // The Cron sweep, as it runs a few minutes later; then once more past the authorization's expiry if still PENDING.
  await worker.scheduled(PAYMENT_SWEEP_CRON, Date.now() + SWEEP_MIN_AGE_MS + 1_000);
  if ((await transactionsOf(shop.id)).some((t) => t.status === "PENDING")) {
    await worker.scheduled(PAYMENT_SWEEP_CRON, validBefore * 1000 + EXPIRY_MARGIN_MS + 1_000);
  }
  const resend = await pay();
  const text = await resend.text();
  const charged = buyerBefore - (await usdcBalance(stack.info.buyer.address));
  const transactions = await transactionsOf(shop.id);
  const completed = transactions.filter((t) => t.status === "COMPLETED");
  expect(transactions.filter((t) => t.status === "PENDING")).toEqual([]);
  if (charged === 0n) {
    expect(completed).toEqual([]);
    expect(resend.status, text).toBe(402);
  } else {
    expect(charged).toBe(BigInt(PRICE));
    expect(completed).toHaveLength(1);
    expect(resend.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: "/crash/echo", query: `city=${slug}` });
    expect(paymentResponseOf(resend)).toMatchObject({ success: true, transaction: completed[0]?.txHash });
    expect(resend.headers.get("payment-reference")).toBe(completed[0]?.txHash);
  }
  // The tenant's ledger is the chain: every COMPLETED payment, and nothing else, reached the merchant.
  const all = (await api("/v1/transactions?limit=100")).body.data as unknown as { status: string; amount: string }[];
  const ledger = all.filter((t) => t.status === "COMPLETED").reduce((sum, t) => sum + BigInt(t.amount), 0n);
  expect(await usdcBalance(merchant)).toBe(ledger);
  return { charged: charged !== 0n };
}

describe("a Worker killed during a paid x402 call, restarted on the same state", () => {
  it("held at the facilitator's verify (before the claim): nothing recorded; the resend pays once and gets its answer", async () => {
    expect(await crashAt("verify", "at-verify")).toEqual({ charged: true });
  });

  it("held at the upstream (after the claim): nothing charged, the sweep records FAILED once it expired, the resend gets 402", async () => {
    expect(await crashAt("upstream", "at-upstream")).toEqual({ charged: false });
  });

  it("upstream answered, killed before the settlement was sent: the sweep settles it, the resend gets the kept answer", async () => {
    expect(await crashAt("settle-unsent", "before-settle")).toEqual({ charged: true });
  });

  it("killed while the settlement was sent (transfer mined, answer lost): COMPLETED by the sweep, the resend gets the answer", async () => {
    expect(await crashAt("settle-sent", "during-settle")).toEqual({ charged: true });
  });

  it("settled, the record never written: COMPLETED by the sweep, the resend gets the answer", async () => {
    expect(await crashAt("record", "before-record")).toEqual({ charged: true });
  });
});

/** Each MPP payment needs a buyer of its own (test/localnet/README.md). */
let nextTempoBuyer = 0;

/** An MPP payment killed at `step`, restarted, swept and sent again: the same two promises, on the Tempo chain. */
async function mppCrashAt(step: "broadcast-unsent" | "broadcast-sent", slug: string) {
  const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
  const shop = await paywall(slug);
  const url = `${shop.mpp}?city=${slug}`;
  const merchantBefore = await tempo.balanceOf(merchant);
  const buyer = createMppBuyer({ privateKey: tempo.buyers[nextTempoBuyer++]?.privateKey as `0x${string}`, rpcUrl: tempo.rpcUrl });
  const credential = await buyer.mppx.createCredential(await fetch(url));
  const pay = () => fetch(url, { headers: { Authorization: credential } });
  const reached = holdAt(step);
  const paid = pay().catch(() => undefined);
  await reached;
  await worker.restart();
  hold?.release();
  hold = undefined;
  expect((await paid)?.status ?? "no answer").not.toBe(200);

  await worker.scheduled(PAYMENT_SWEEP_CRON, Date.now() + SWEEP_MIN_AGE_MS + 1_000);
  if ((await transactionsOf(shop.id)).some((t) => t.status === "PENDING")) {
    // An MPP transaction is valid 25 s: past that and the margin, nothing can mine it.
    await worker.scheduled(PAYMENT_SWEEP_CRON, Date.now() + 25_000 + EXPIRY_MARGIN_MS + 1_000);
  }
  const resend = await pay();
  const text = await resend.text();
  const charged = (await tempo.balanceOf(merchant)) - merchantBefore;
  const transactions = await transactionsOf(shop.id);
  const completed = transactions.filter((t) => t.status === "COMPLETED");
  expect(transactions.filter((t) => t.status === "PENDING")).toEqual([]);
  if (charged === 0n) {
    expect(completed).toEqual([]);
    expect(resend.status, text).toBe(402);
  } else {
    expect(charged).toBe(BigInt(PRICE));
    expect(completed).toHaveLength(1);
    expect(resend.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: "/crash/echo", query: `city=${slug}` });
    expect(resend.headers.get("payment-receipt")).toBeTruthy();
    expect(resend.headers.get("payment-reference")).toBe(completed[0]?.txHash);
  }
  return { charged: charged !== 0n };
}

describe("a Worker killed during a paid MPP call, restarted on the same state", () => {
  it("upstream answered, killed before the broadcast: the transaction expires unpaid, the resend gets 402", async () => {
    expect(await mppCrashAt("broadcast-unsent", "mpp-before-broadcast")).toEqual({ charged: false });
  });

  it("killed while broadcasting (mined, answer lost): COMPLETED by the sweep, the resend gets the answer", async () => {
    expect(await mppCrashAt("broadcast-sent", "mpp-during-broadcast")).toEqual({ charged: true });
  });
});
