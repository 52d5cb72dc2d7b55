// Shared setup of the gateway's end-to-end tests: paywalls created through the management API, the Worker called
// with the local facilitator as the testnet facilitator, buyers, the chain, and the upstream stub's records.
import { listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { type Address, createPublicClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { expect, inject } from "vitest";
import type { Event, Transaction } from "../../src/api/routes/history-records.ts";
import { createX402Buyer } from "../../src/cli/localnet/buyer.ts";
import type { RecordedRequest } from "../../src/cli/localnet/upstream.ts";
import { api, send } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import type { Actor } from "../support/resources.ts";

export const net = inject("localnet");
export const FACILITATOR = "https://facilitator.gateway.test";
export const UPSTREAM = "https://upstream.gateway.test";

/** The Worker as deployed with the local facilitator configured for testnet paywalls. */
export const GATEWAY_ENV = { FACILITATOR_URL_TESTNET: FACILITATOR } as Partial<Env>;
export const gatewayFetch = (input: RequestInfo | URL, init?: RequestInit) => send(new Request(input, init), GATEWAY_ENV);

export const buyer = () =>
  createX402Buyer({ privateKey: net.buyer.privateKey, network: net.network, usdc: net.usdc.address, fetch: gatewayFetch });

const chain = createPublicClient({ transport: http("https://rpc.gateway.test") });
export const balanceOf = (address: string) =>
  chain.readContract({ address: net.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [address as Address] });
export const receiptOf = (hash: `0x${string}`) => chain.getTransactionReceipt({ hash });

export async function upstreamRequests(prefix: string): Promise<RecordedRequest[]> {
  return (await (await fetch(`${UPSTREAM}/__upstream/requests?prefix=${prefix}`)).json()) as RecordedRequest[];
}

export interface FacilitatorLogEntry {
  endpoint: "verify" | "settle";
  nonce: string;
  ok: boolean;
  reason?: string;
  transaction?: string;
}
export async function settlementsOf(nonce: string): Promise<FacilitatorLogEntry[]> {
  const log = (await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as FacilitatorLogEntry[];
  return log.filter((e) => e.endpoint === "settle" && e.ok && e.nonce?.toLowerCase() === nonce.toLowerCase());
}

/** The facilitator's `/verify` calls for one authorization nonce. */
export async function verificationsOf(nonce: string): Promise<number> {
  const log = (await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as FacilitatorLogEntry[];
  return log.filter((e) => e.endpoint === "verify" && e.nonce?.toLowerCase() === nonce.toLowerCase()).length;
}

/** A payment's kept answer as D1 holds it (`null` when there is none). */
export const paidAnswerRow = (transactionId: string) =>
  env.DB.prepare("SELECT * FROM paid_answers WHERE transaction_id = ?")
    .bind(transactionId)
    .first<{ tenant_id: string; answer: string | null; answered_at: number | null; payment_key: string | null }>();

/** The paid answer kept for a payment where the gateway records it: D1's `paid_answers`, or the payment's object. */
export async function keptAnswer(transactionId: string) {
  if (env.PAYMENT_RECORDS === "objects") {
    const row = (await env.PAYMENT_COORDINATOR.getByName(transactionId).known(new Date(0)))?.row;
    return row && { answer: row.answer, answeredAt: row.answeredAt?.getTime() ?? null };
  }
  const row = await paidAnswerRow(transactionId);
  return row && { answer: row.answer, answeredAt: row.answered_at };
}

/** Every part of a stored `v1.<key>.<iv>.<ciphertext>` value, base64url-decoded, as text: what a reader of D1 could see. */
export const sealedText = (stored: string) =>
  stored
    .split(".")
    .map((part) => {
      try {
        return atob(part.replaceAll("-", "+").replaceAll("_", "/"));
      } catch {
        return part;
      }
    })
    .join("\n");

export interface Shop {
  actor: Actor;
  merchant: string;
  prefix: string;
  serviceId: string;
  paywallId: string;
  slug: string;
  x402: string;
  mpp: string | null;
}

export interface ShopOptions {
  price?: string;
  authMethod?: string;
  authConfig?: Record<string, string>;
  /** Path under the shop's own upstream prefix (default `/echo`); ROUTE target. */
  route?: string;
  paywall?: Record<string, unknown>;
  networks?: string[];
  /** The paywall's `allowedHeaders` (set by PATCH: create does not take them). */
  allowedHeaders?: string[];
}

let counter = 0;

/** A tenant with a fresh merchant wallet, a service on the upstream stub and one paywall, made through the API. */
export async function openShop(options: ShopOptions = {}): Promise<Shop> {
  const merchant = privateKeyToAddress(generatePrivateKey());
  const { key, tenant } = await createApiKey({
    tenant: undefined,
  });
  // The merchant wallet is the tenant's primary wallet: set it before the paywall copies it.
  await env.DB.prepare("UPDATE tenants SET wallet_address = ? WHERE id = ?").bind(merchant, tenant.id).run();
  const actor = { key, tenant: { ...tenant, walletAddress: merchant } };
  const prefix = `/${crypto.randomUUID()}`;
  const networks = options.networks ?? ["base-sepolia"];
  const service = await api("/v1/services", {
    key,
    method: "POST",
    body: {
      name: "Stub API",
      baseUrl: `${UPSTREAM}${prefix}`,
      authMethod: options.authMethod ?? "none",
      authConfig: options.authConfig ?? {},
      networks,
      mode: "testnet",
    },
  });
  expect(service.status, service.text).toBe(201);
  const slug = `shop-${Date.now().toString(36)}-${(counter++).toString(36)}`;
  const paywall = await api("/v1/paywalls", {
    key,
    method: "POST",
    body: {
      slug,
      name: "Stub paywall",
      targetType: "ROUTE",
      targetRoute: options.route ?? "/echo",
      serviceId: service.body.data.id,
      price: options.price ?? "1234",
      currency: "USDC",
      networks,
      fulfillmentMode: "PROXY",
      ...options.paywall,
    },
  });
  expect(paywall.status, paywall.text).toBe(201);
  expect(paywall.body.data.merchantWallet).toBe(merchant);
  if (options.allowedHeaders) {
    const patched = await api(`/v1/paywalls/${paywall.body.data.id}`, {
      key,
      method: "PATCH",
      body: { allowedHeaders: options.allowedHeaders },
    });
    expect(patched.status, patched.text).toBe(200);
  }
  return {
    actor,
    merchant,
    prefix,
    serviceId: service.body.data.id,
    paywallId: paywall.body.data.id,
    slug,
    x402: paywall.body.data.paymentUrls.x402,
    mpp: paywall.body.data.paymentUrls.mpp,
  };
}

/** A payment payload for the shop's current 402 challenge, built by the standard's client, and its header value. */
export async function signedPayment(url: string, init?: RequestInit) {
  const b = buyer();
  const challenge = await gatewayFetch(url, init);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
  const payload = await b.http.createPaymentPayload(required);
  const header = b.http.encodePaymentSignatureHeader(payload);
  const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
  return { b, required, payload, header: header["PAYMENT-SIGNATURE"] as string, nonce };
}

/** A payment for the shop's current challenge, signed by the x402 client with the `payment-identifier` `id`. */
export async function signedWithId(url: string, id: string) {
  const b = buyer();
  const challenge = await gatewayFetch(url);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
  appendPaymentIdentifierToExtensions(required.extensions ?? {}, id);
  const payload = await b.http.createPaymentPayload(required);
  const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
  return { payload, nonce, header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string };
}

/**
 * Over payments recorded in their objects (`PAYMENT_RECORDS=objects`, the default), D1 is their read model, a moment
 * behind: runs every payment object's alarm that still holds records (it sends them to the payment-records queue at
 * once), then waits until the queue's consumer reported them all landed in D1. Over D1 nothing waits.
 */
export async function recordsLanded(records = env.PAYMENT_RECORDS): Promise<void> {
  if (records !== "objects") return;
  const holding = async () => {
    const objects = (await listDurableObjectIds(env.PAYMENT_COORDINATOR)).map((id) => env.PAYMENT_COORDINATOR.get(id));
    const unsent = await Promise.all(objects.map((o) => o.unsentRecords()));
    return objects.filter((_, i) => unsent[i]! > 0);
  };
  for (const object of await holding()) await runDurableObjectAlarm(object);
  // Bounded: records D1 keeps refusing stay in their objects (retried there; the test reads what landed).
  for (const until = Date.now() + 10_000; Date.now() < until && (await holding()).length > 0; ) {
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function history(shop: Shop) {
  await recordsLanded();
  const [transactions, events] = await Promise.all([
    api(`/v1/transactions?paywallId=${shop.paywallId}`, { key: shop.actor.key }),
    api(`/v1/events?paywallId=${shop.paywallId}`, { key: shop.actor.key }),
  ]);
  expect(transactions.status, transactions.text).toBe(200);
  expect(events.status, events.text).toBe(200);
  return { transactions: transactions.body.data as Transaction[], events: events.body.data as Event[] };
}

/** Polls `probe` every 50 ms until it gives a value (or `ms` pass). */
export const waitFor = async <T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
};
