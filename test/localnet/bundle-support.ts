/**
 * What the tests that pay the production bundle from outside share (test/localnet/bundle.test.ts, crash.test.ts): the
 * management API of a running Worker with its seeded key, and a stub service on the local upstream whose payments go
 * to `merchant`.
 */
import type { Address } from "viem";
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
