/**
 * What the tests that pay the production bundle from outside share (test/localnet/bundle.test.ts, crash.test.ts): the
 * management API of a running Worker with its seeded key, and a stub service on the local upstream whose payments go
 * to `merchant`.
 */
import { type Address, createPublicClient, createWalletClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { GATEWAY_TEST_HOSTS } from "../../src/cli/localnet/outbound.ts";
import type { LocalStack } from "../../src/cli/localnet/stack.ts";
import type { RunningWorker } from "../browser/support/worker.ts";

export interface ApiAnswer {
  status: number;
  body: { data: Record<string, unknown> & { paymentUrls?: Record<string, string> } };
}

/** The management API of `worker()` (read at each call: a restarted Worker keeps its URL and key). */
export const workerApi =
  (worker: () => RunningWorker) =>
  async (path: string, init: { method?: string; body?: unknown } = {}): Promise<ApiAnswer> => {
    const { url, key } = worker();
    const res = await fetch(`${url}${path}`, {
      method: init.method ?? "GET",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as ApiAnswer["body"] };
  };

/** The seeded tenant paid at `merchant` (EVM only), and a service of its on the local upstream at `/<path>`: its id. */
export async function stubService(
  worker: RunningWorker,
  stack: LocalStack,
  merchant: Address,
  name: string,
  path: string,
): Promise<string> {
  const db = await worker.db();
  await db
    .prepare("UPDATE tenants SET wallet_address = ?, tempo_wallet_address = NULL WHERE id = ?")
    .bind(merchant, worker.tenantId)
    .run();
  const service = await workerApi(() => worker)("/v1/services", {
    method: "POST",
    body: {
      name,
      baseUrl: `https://${GATEWAY_TEST_HOSTS.upstream}/${path}`,
      authMethod: "none",
      authConfig: {},
      networks: [stack.info.networkId, "tempo-testnet"],
      mode: "testnet",
    },
  });
  if (service.status !== 201) throw new Error(`the stub service was not created: ${JSON.stringify(service.body)}`);
  return service.body.data.id as string;
}

/** A payment of a paywall as the tenant reads it in `GET /v1/transactions`. */
export interface Transaction {
  id: string;
  protocol: string;
  status: string;
  txHash: string | null;
  amount: string;
  failureReason: string | null;
}

/** A paywall's transactions (newest first) and its events' types (sorted), as the tenant reads them. */
export interface History {
  transactions: Transaction[];
  eventTypes: string[];
}

/**
 * A PENDING payment's object sweeps it this long past its `validBefore` at the latest (`SWEEP_AFTER_EXPIRY_MS` of
 * src/core/ledger/payment-object.ts, a module only workerd loads).
 */
export const OBJECT_SWEEP_AFTER_EXPIRY_MS = 120_000;

/** How long a read waits for the payments' records to reach the read model (about 2 s after their outcome). */
export const READ_MODEL_WAIT_MS = 10_000;

/**
 * `read` again until `done` holds or `ms` passed (polling, as a tenant would refresh); its last value either way, for
 * the caller's assertions to judge. The ledger's records reach D1 a moment after each move (docs/gateway.md,
 * "Payments recorded in their objects").
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = READ_MODEL_WAIT_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Whether `payments` payments have landed whole in a history: as many transactions, each with its REQUEST event and,
 * once it is no longer PENDING, its outcome's (SUCCESS or ERROR); with `settled`, none PENDING.
 */
export const landed =
  (payments: number, { settled = true } = {}) =>
  ({ transactions, eventTypes }: History) =>
    transactions.length >= payments &&
    (!settled || transactions.every((t) => t.status !== "PENDING")) &&
    eventTypes.length === transactions.reduce((n, t) => n + (t.status === "PENDING" ? 1 : 2), 0);

/** A paywall's history as the tenant reads it once `done` holds (bounded: `eventually`). */
export function historyOf(api: ReturnType<typeof workerApi>) {
  const read = async (paywallId: string): Promise<History> => {
    const [transactions, events] = await Promise.all([
      api(`/v1/transactions?paywallId=${paywallId}`),
      api(`/v1/events?paywallId=${paywallId}`),
    ]);
    return {
      transactions: transactions.body.data as unknown as Transaction[],
      eventTypes: (events.body.data as unknown as { eventType: string }[]).map((e) => e.eventType).sort(),
    };
  };
  return (paywallId: string, done: (h: History) => boolean = landed(1), ms = READ_MODEL_WAIT_MS) =>
    eventually(() => read(paywallId), done, ms);
}

/** The funding of the buyers of their own, one transfer at a time (the stack's buyer sends them all). */
let funding: Promise<unknown> = Promise.resolve();

/**
 * An x402 buyer of its own, given `amount` of the token by the stack's buyer: payments whose outcomes land side by
 * side (their objects' sweeps) each read their own buyer's balance.
 */
export async function fundedX402Buyer(stack: LocalStack, amount: bigint) {
  const privateKey = generatePrivateKey();
  const address = privateKeyToAddress(privateKey);
  const chain = createPublicClient({ transport: http(stack.info.rpcUrl), pollingInterval: 100 });
  const funder = createWalletClient({
    account: privateKeyToAccount(stack.info.buyer.privateKey),
    transport: http(stack.info.rpcUrl),
  });
  const funded = funding.then(async () => {
    const hash = await funder.writeContract({
      chain: null,
      address: stack.info.usdc.address,
      abi: erc20Abi,
      functionName: "transfer",
      args: [address, amount],
    });
    await chain.waitForTransactionReceipt({ hash });
  });
  funding = funded.catch(() => {});
  await funded;
  return { privateKey, address };
}
