// A paid call whose Worker is killed: the production bundle in Miniflare, on persisted D1 and Durable Object storage
// and the local chains, has its runtime disposed while one step of a payment is held (x402: the facilitator's verify,
// the upstream call, the settlement before or after its transfer was sent, its records on their way to D1; MPP: the
// broadcast before or after it was sent), then started again on the same state. The payment, recorded in its Durable
// Object, is finished there by its object's own sweep (its alarm, persisted with the object, fires in the new runtime
// when due, in real time: docs/gateway.md, "Its own sweep"). After that and the buyer's resend of the same payment,
// either the buyer was not charged and no transaction is COMPLETED, or the buyer was charged exactly once, the payment
// has exactly one COMPLETED transaction and the resend gets the upstream's answer; the merchant's balance equals the
// ledger's total. The kills happen one after the other; the sweeps they wait for then run side by side.
import { Credential } from "mppx";
import { type Address, createPublicClient, erc20Abi, http, keccak256 } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Buyer, paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "../../src/cli/localnet/outbound.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import { SWEEP_MIN_AGE_MS } from "../../src/gateway/sweep.ts";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";
import {
  eventually,
  fundedX402Buyer,
  historyOf,
  landed,
  OBJECT_SWEEP_AFTER_EXPIRY_MS,
  READ_MODEL_WAIT_MS,
  stubService,
  workerApi,
} from "./bundle-support.ts";

const PORT = 8881;
const PRICE = "2500"; // 0.0025 USDC

let stack: LocalStack;
let worker: RunningWorker;
const merchant = privateKeyToAddress(generatePrivateKey());
let serviceId: string;

/** Where the payment is when the Worker is killed. */
type Step = "verify" | "upstream" | "settle-unsent" | "settle-sent" | "records" | "broadcast-unsent" | "broadcast-sent";

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

const history = historyOf(api);

const usdcBalance = (address: string) =>
  createPublicClient({ transport: http(stack.info.rpcUrl) }).readContract({
    address: stack.info.usdc.address,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address as Address],
  });

/** A payment for the paywall's challenge, signed by x402's own client, valid `validFor` seconds (the paywall's 300 by default). */
async function signed(url: string, buyer: { privateKey: `0x${string}` }, validFor?: number) {
  const b = createX402Buyer({ privateKey: buyer.privateKey, network: stack.info.network, usdc: stack.info.usdc.address });
  const challenge = await fetch(url);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
  const terms = structuredClone(required.accepts[0]!);
  if (validFor !== undefined) required.accepts[0]!.maxTimeoutSeconds = validFor;
  const payload = await b.http.createPaymentPayload(required);
  payload.accepted = terms;
  const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore);
  return { header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string, validBefore };
}

/** The read model refusing a paywall's transactions (a trigger), so its payments' records cannot land in D1. */
const RECORDS_FAULT = "crash_refuse_records";

/** A payment killed at its step, to be checked once its object has swept it. */
interface Crashed {
  paywallId: string;
  slug: string;
  /** Sends the same payment again. */
  pay(): Promise<Response>;
  /** Whether the buyer paid (x402: its own balance; MPP: its signed transaction mined). */
  charged(): Promise<boolean>;
  /**
   * By when its object's sweep has finished it and its records landed, at the latest (ms since the epoch); `undefined`
   * when nothing of it was recorded (killed before its claim).
   */
  sweptBy: number | undefined;
}

/** A Worker killed with `step` held (its request never answered), started again on the same state. */
async function killAt(step: Step, pay: () => Promise<Response>) {
  const reached = holdAt(step);
  const paid = pay().catch(() => undefined);
  await reached;
  await worker.restart(); // the Worker is killed with the step held, and started again on the same state
  hold?.release();
  hold = undefined;
  expect((await paid)?.status ?? "no answer").not.toBe(200);
}

async function crashAt(step: Step, slug: string, validFor?: number): Promise<Crashed> {
  const shop = await paywall(slug);
  const url = `${shop.url}?city=${slug}`;
  const buyer = await fundedX402Buyer(stack, 10n * BigInt(PRICE));
  const before = await usdcBalance(buyer.address);
  const { header, validBefore } = await signed(url, buyer, validFor);
  const pay = () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });

  if (step === "records") {
    // Paid and answered; the read model refuses its records, and the Worker is killed with them on their way.
    const db = await worker.db();
    for (const on of ["INSERT", "UPDATE"]) {
      await db
        .prepare(
          `CREATE TRIGGER ${RECORDS_FAULT}_${on.toLowerCase()} BEFORE ${on} ON transactions WHEN NEW.paywall_id = '${shop.id}'
           BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
        )
        .run();
    }
    const res = await pay();
    expect(res.status).toBe(200);
    // Killed once the queue's consumer has tried them and D1 refused.
    const refused = await eventually(
      async () => worker.logs.some((l) => l.message.includes('"apply-failed"')),
      (seen) => seen,
    );
    expect(refused).toBe(true);
    await worker.restart();
    expect((await history(shop.id, () => true)).transactions).toEqual([]);
    for (const on of ["insert", "update"]) await (await worker.db()).prepare(`DROP TRIGGER ${RECORDS_FAULT}_${on}`).run();
  } else {
    await killAt(step, pay);
  }
  return {
    paywallId: shop.id,
    slug,
    pay,
    charged: async () => {
      const spent = before - (await usdcBalance(buyer.address));
      if (spent !== 0n) expect(spent).toBe(BigInt(PRICE));
      return spent !== 0n;
    },
    sweptBy: sweptBy(step, validBefore),
  };
}

/**
 * When a payment killed at `step` is finished in D1 at the latest: a kept answer is swept `SWEEP_MIN_AGE_MS` after it
 * was kept; without one, past the authorization's expiry; records refused by D1 are sent again by their object
 * `RECORD_RESEND_MS` (60 s) after their send, if the queue's own retries did not land them first.
 */
function sweptBy(step: Step, validBefore: number): number | undefined {
  if (step === "verify") return undefined;
  if (step === "upstream") return validBefore * 1000 + OBJECT_SWEEP_AFTER_EXPIRY_MS + 20_000;
  return Date.now() + SWEEP_MIN_AGE_MS + 30_000;
}

/** Each MPP payment needs a buyer of its own (test/localnet/README.md). */
let nextTempoBuyer = 0;

/** An MPP payment killed at `step` and started again: the same promises, on the Tempo chain. */
async function mppCrashAt(step: "broadcast-unsent" | "broadcast-sent", slug: string): Promise<Crashed> {
  const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
  const shop = await paywall(slug);
  const url = `${shop.mpp}?city=${slug}`;
  const buyer = createMppBuyer({ privateKey: tempo.buyers[nextTempoBuyer++]?.privateKey as `0x${string}`, rpcUrl: tempo.rpcUrl });
  const credential = await buyer.mppx.createCredential(await fetch(url));
  // mppx's client signs its transaction valid 25 s.
  const validBefore = Date.now() + 25_000;
  const pay = () => fetch(url, { headers: { Authorization: credential } });
  await killAt(step, pay);
  const signedTransaction = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
  const chain = createPublicClient({ transport: http(tempo.rpcUrl) });
  return {
    paywallId: shop.id,
    slug,
    pay,
    charged: async () => {
      const receipt = await chain.getTransactionReceipt({ hash: keccak256(signedTransaction) }).catch(() => undefined);
      return receipt?.status === "success";
    },
    sweptBy: validBefore + OBJECT_SWEEP_AFTER_EXPIRY_MS + 20_000,
  };
}

/**
 * Once its object swept it (bounded by `sweptBy`): no transaction PENDING, and either nothing charged, none COMPLETED
 * and the resend refused with the standard's 402, or charged once, one COMPLETED and the resend gets the upstream's
 * answer with the settlement's reference.
 */
async function finished(c: Crashed, protocol: "x402" | "mpp") {
  if (c.sweptBy !== undefined) {
    const { transactions } = await history(c.paywallId, landed(1), Math.max(c.sweptBy - Date.now(), READ_MODEL_WAIT_MS));
    expect(transactions.filter((t) => t.status === "PENDING")).toEqual([]);
  }
  const resend = await c.pay();
  const text = await resend.text();
  const charged = await c.charged();
  // A resend that pays anew (its first request died before anything was recorded) lands its records a moment later.
  const { transactions } = await history(c.paywallId, landed(1));
  expect(transactions.filter((t) => t.status === "PENDING")).toEqual([]);
  const completed = transactions.filter((t) => t.status === "COMPLETED");
  if (!charged) {
    expect(completed).toEqual([]);
    expect(resend.status, text).toBe(402);
  } else {
    expect(completed).toHaveLength(1);
    expect(completed[0]?.amount).toBe(PRICE);
    expect(resend.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: "/crash/echo", query: `city=${c.slug}` });
    if (protocol === "x402")
      expect(paymentResponseOf(resend)).toMatchObject({ success: true, transaction: completed[0]?.txHash });
    else expect(resend.headers.get("payment-receipt")).toBeTruthy();
    expect(resend.headers.get("payment-reference")).toBe(completed[0]?.txHash);
  }
  return { charged };
}

/** The payments killed, one after the other (a kill disposes the whole runtime); their sweeps then run side by side. */
const crashed = new Map<string, Promise<Crashed>>();

beforeAll(async () => {
  const kills: [string, () => Promise<Crashed>][] = [
    // Valid 40 s (the least the gateway takes), so it expires, and is swept, within minutes.
    ["at-upstream", () => crashAt("upstream", "at-upstream", 40)],
    ["at-verify", () => crashAt("verify", "at-verify")],
    ["before-settle", () => crashAt("settle-unsent", "before-settle")],
    ["during-settle", () => crashAt("settle-sent", "during-settle")],
    ["mpp-before-broadcast", () => mppCrashAt("broadcast-unsent", "mpp-before-broadcast")],
    ["mpp-during-broadcast", () => mppCrashAt("broadcast-sent", "mpp-during-broadcast")],
    ["before-records", () => crashAt("records", "before-records")],
  ];
  for (const [slug, kill] of kills) {
    const done = kill();
    done.catch(() => {}); // its test reports it
    crashed.set(slug, done);
    await done.catch(() => {});
  }
}, 240_000);

const SWEEP_TIMEOUT_MS = 360_000;
const caseOf = (slug: string) => crashed.get(slug) as Promise<Crashed>;

describe("a Worker killed during a paid x402 call, restarted on the same state", () => {
  it("held at the facilitator's verify (before the claim): nothing recorded; the resend pays once and gets its answer", async () => {
    expect(await finished(await caseOf("at-verify"), "x402")).toEqual({ charged: true });
  });

  it(
    "held at the upstream (after the claim): nothing charged, its object's sweep records FAILED once it expired, the resend gets 402",
    async () => {
      expect(await finished(await caseOf("at-upstream"), "x402")).toEqual({ charged: false });
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    "upstream answered, killed before the settlement was sent: its object's sweep settles it, the resend gets the kept answer",
    async () => {
      expect(await finished(await caseOf("before-settle"), "x402")).toEqual({ charged: true });
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    "killed while the settlement was sent (transfer mined, answer lost): COMPLETED by its object's sweep, the resend gets the answer",
    async () => {
      expect(await finished(await caseOf("during-settle"), "x402")).toEqual({ charged: true });
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    "settled and answered, killed while D1 refused its records: they land after the restart, COMPLETED once, the resend gets the answer",
    async () => {
      expect(await finished(await caseOf("before-records"), "x402")).toEqual({ charged: true });
    },
    SWEEP_TIMEOUT_MS,
  );
});

describe("a Worker killed during a paid MPP call, restarted on the same state", () => {
  it(
    "upstream answered, killed before the broadcast: the transaction expires unpaid, the resend gets 402",
    async () => {
      expect(await finished(await caseOf("mpp-before-broadcast"), "mpp")).toEqual({ charged: false });
    },
    SWEEP_TIMEOUT_MS,
  );

  it(
    "killed while broadcasting (mined, answer lost): COMPLETED by its object's sweep, the resend gets the answer",
    async () => {
      expect(await finished(await caseOf("mpp-during-broadcast"), "mpp")).toEqual({ charged: true });
    },
    SWEEP_TIMEOUT_MS,
  );
});

describe("after every kill", () => {
  it("the tenant's ledger is the chain: every COMPLETED payment, and nothing else, reached the merchant", async () => {
    const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
    const all = (await api("/v1/transactions?limit=100")).body.data as unknown as {
      protocol: string;
      status: string;
      amount: string;
    }[];
    const total = (protocol: string) =>
      all.filter((t) => t.protocol === protocol && t.status === "COMPLETED").reduce((sum, t) => sum + BigInt(t.amount), 0n);
    expect(all.filter((t) => t.status === "PENDING")).toEqual([]);
    expect(await usdcBalance(merchant)).toBe(total("x402"));
    expect(await tempo.balanceOf(merchant)).toBe(total("mpp"));
  });
});
