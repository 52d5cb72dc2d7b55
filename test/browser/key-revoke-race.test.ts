// A revoke racing requests in flight, over real sockets to the production bundle in workerd: 100 clients send
// `GET /v1/me` without pause while the key is revoked through the key-management code, its key object told through the
// namespace binding from outside the Worker (as the operator CLI does through wrangler's dev registry). None is
// admitted after the revoke returned; every request sent after it is refused.
import { Agent, request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { keyObjectName } from "../../src/core/keys/key-object.ts";
import { createKey, revokeKey } from "../../src/core/keys/management.ts";
import { SCOPES } from "../../src/core/keys/scopes.ts";
import { getDb } from "../../src/db/client.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;

beforeAll(async () => {
  // No limit in reach: a refused request is counted per client address, and every one comes from 127.0.0.1.
  worker = await startWorker({ port: 8861, vars: { RATE_LIMIT_MAX: "1000000", IP_RATE_LIMIT_MAX: "1000000" } });
});

afterAll(async () => {
  await worker?.stop();
});

const CLIENTS = 100;

interface Answer {
  status: number;
  code?: string;
  /** The key's window count when it was admitted (`RateLimit-Limit` − `RateLimit-Remaining`). */
  admittedAs?: number;
  sentAfterReturn: boolean;
}

function me(agent: Agent, key: string): Promise<Omit<Answer, "sentAfterReturn">> {
  return new Promise((resolve, reject) => {
    const req = request(`${worker.url}/v1/me`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { code?: string };
        const limit = Number(res.headers["ratelimit-limit"]);
        const remaining = Number(res.headers["ratelimit-remaining"]);
        resolve({
          status: res.statusCode ?? 0,
          code: body.code,
          ...(res.statusCode === 200 ? { admittedAs: limit - remaining } : {}),
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

it(`${CLIENTS} clients in flight while the key is revoked: none admitted after the revoke returned`, {
  timeout: 120_000,
}, async () => {
  const db = getDb(await worker.db());
  const { id, key } = await createKey(db, { tenant: worker.tenantId, name: "raced", scopes: [...SCOPES] });
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const namespace = await worker.mf.getDurableObjectNamespace("RATE_LIMITER", "app");
  let returned = false;
  let stop = false;
  let inFlight = 0;
  const answers: Answer[] = [];
  const client = async () => {
    while (!stop) {
      const sentAfterReturn = returned;
      inFlight++;
      const answer = await me(agent, key);
      inFlight--;
      answers.push({ ...answer, sentAfterReturn });
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  while (answers.length < 3 * CLIENTS) await new Promise((r) => setTimeout(r, 5));

  let admittedAtForget = -1;
  await revokeKey(
    {
      db,
      cache: {
        forget: async (hashes) => {
          for (const hash of hashes) {
            const stub = namespace.get(namespace.idFromName(keyObjectName(hash)));
            const res = await stub.fetch("http://key-object/forget", { method: "POST" });
            admittedAtForget = ((await res.json()) as { admitted: number }).admitted;
          }
        },
      },
    },
    { id },
  );
  returned = true;
  const inFlightAtReturn = inFlight;
  while (answers.filter((a) => a.sentAfterReturn).length < 3 * CLIENTS) await new Promise((r) => setTimeout(r, 5));
  stop = true;
  await Promise.all(clients);
  agent.destroy();

  // The race was real: requests were in flight when the revoke returned.
  expect(inFlightAtReturn).toBeGreaterThan(0);
  // Every request sent after the revoke returned was refused as revoked...
  const later = answers.filter((a) => a.sentAfterReturn);
  expect(later.map((a) => a.code)).toEqual(Array(later.length).fill("KEY_REVOKED"));
  // ...and every admitted request was admitted before the object dropped its record (the count it had then), which
  // was before the revoke returned.
  const admitted = answers.filter((a) => a.status === 200);
  expect(admittedAtForget).toBeGreaterThanOrEqual(3 * CLIENTS - CLIENTS);
  expect(Math.max(...admitted.map((a) => a.admittedAs ?? Number.POSITIVE_INFINITY))).toBeLessThanOrEqual(admittedAtForget);
  expect(admitted).toHaveLength(admittedAtForget);
  expect(answers.filter((a) => a.status !== 200).every((a) => a.code === "KEY_REVOKED")).toBe(true);
});
