// A CPU profile of the app's isolate under a scenario's load: V8's sampling profiler through workerd's inspector,
// each sample mapped through the bundle's source map to its file (ours, or the package), self time and time on the
// stack. For finding where a scenario's CPU goes; the bench itself never profiles.
//
//   BENCH_INSPECTOR=9229 npm run bench -- --only "mpp/pay (402" --duration 30 &
//   npm run bench:profile -- --wait 45 --seconds 10          # once the scenario's load has started
//
// `--wait`: seconds before sampling (the bench builds, measures startup and the references first: watch its progress
// lines); `--seconds`: how long to sample; `--port`: the inspector's port (BENCH_INSPECTOR); `--worker`: the worker
// (`app` by default); `--save <file>`: also writes the raw profile there (a `.cpuprofile` DevTools opens). The bundle and
// its map are the bench's own, in its newest working directory, or the folder `--bundle` names (the `--script` bundle's,
// or when another bench runs on the machine too); `--from <file>`: reads a saved profile instead of sampling; `--groups`:
// each sample counted once, in the first of `GROUPS` one of its frames matches (what a paid request does).
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    port: { type: "string", default: "9229" },
    seconds: { type: "string", default: "10" },
    wait: { type: "string", default: "0" },
    worker: { type: "string", default: "app" },
    top: { type: "string", default: "40" },
    save: { type: "string" },
    bundle: { type: "string" },
    from: { type: "string" },
    groups: { type: "boolean", default: false },
  },
});

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** The newest bench working directory's bundle (run.ts makes one per run under /dev/shm or the system's tmpdir). */
function bundleDir(): string {
  const dirs = ["/dev/shm", tmpdir()].flatMap((root) => {
    try {
      return readdirSync(root)
        .filter((d) => d.startsWith("bench-"))
        .map((d) => join(root, d, "app"));
    } catch {
      return [];
    }
  });
  const newest = dirs.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error("no bench working directory: start `BENCH_INSPECTOR=<port> npm run bench …` first");
  return newest;
}

async function sample(): Promise<{ nodes: ProfileNode[]; samples: number[] }> {
  await new Promise((resolve) => setTimeout(resolve, Number(args.wait) * 1000));
  const targets = (await (await fetch(`http://127.0.0.1:${args.port}/json`)).json()) as {
    id: string;
    webSocketDebuggerUrl: string;
  }[];
  const target = targets.find((t) => t.id === `core:user:${args.worker}`);
  if (!target) throw new Error(`no worker "${args.worker}" among ${targets.map((t) => t.id).join(", ")}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve) => ws.addEventListener("open", resolve));
  let next = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (e) => {
    const message = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params = {}) =>
    new Promise<unknown>((resolve) => {
      pending.set(++next, resolve);
      ws.send(JSON.stringify({ id: next, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: 50 });
  await call("Profiler.start");
  await new Promise((resolve) => setTimeout(resolve, Number(args.seconds) * 1000));
  const { profile } = (await call("Profiler.stop")) as { profile: { nodes: ProfileNode[]; samples: number[] } };
  ws.close();
  return profile;
}

const profile: { nodes: ProfileNode[]; samples: number[] } = args.from
  ? JSON.parse(readFileSync(args.from, "utf8"))
  : await sample();
if (args.save) writeFileSync(args.save, JSON.stringify(profile));
const dir = args.bundle ?? bundleDir();
const map = new SourceMap(JSON.parse(readFileSync(join(dir, "index.js.map"), "utf8")));

/** `function @ file:line`, the file relative to the project (packages as `nm/<name>/…`). */
function where(node: ProfileNode): string {
  const f = node.callFrame;
  let place = `${f.url.split("/").pop()}:${f.lineNumber}`;
  let name = f.functionName || "(anonymous)";
  if (f.url.endsWith(".js") && f.lineNumber >= 0) {
    const o = map.findEntry(f.lineNumber, f.columnNumber);
    if ("originalSource" in o && o.originalSource) {
      place = `${o.originalSource.replace(/.*node_modules\//, "nm/").replace(/.*\/src\//, "src/")}:${o.originalLine + 1}`;
      const named = (o as { name?: string }).name;
      if (named) name = named;
    }
  }
  return `${name} @ ${place}`;
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
const counts = new Map<number, number>();
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);

const self = new Map<string, number>();
const onStack = new Map<string, number>();
for (const [id, count] of counts) {
  const own = where(byId.get(id) as ProfileNode);
  self.set(own, (self.get(own) ?? 0) + count);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = where(byId.get(at) as ProfileNode);
    if (seen.has(name)) continue;
    seen.add(name);
    onStack.set(name, (onStack.get(name) ?? 0) + count);
  }
}

/** What a paid request does, by the frames on a sample's stack (drizzle's own files map to `src/sql/`, `src/d1/`, …). */
const GROUPS: [string, RegExp][] = [
  ["idle, V8's own work, garbage collection", /^\((idle|program|garbage collector)\)/],
  [
    "the ledger (its D1 moves and reads, drizzle, the D1 binding)",
    /src\/core\/(ledger|webhooks)\/|src\/db\/(ledger|paid-answers)\.ts|pipeline\/record\.ts|d1-api|@ src\/(sql|sqlite-core|d1)\/|@ src\/(entity|query-promise|tracing|utils)\.ts/,
  ],
  ["the payment's coordinator object", /src\/gateway\/coordinator\.ts/],
  ["facilitators' health", /src\/core\/facilitators\/|facilitator-health\.ts/],
  ["fingerprints and ids (SHA-256)", /requestFingerprint|bytesSha256|buyerProof|src\/lib\/ids\.ts/],
  ["sealing (AES-GCM, base64)", /paid-answer\.ts|sweep-settlement\.ts|secret-box\.ts|src\/lib\/base64\.ts/],
  ["the payment decoded and matched", /presented\.ts|acceptPayment|decodedPayment|matchPayment/],
  ["x402 verify", /verifyPayment/],
  ["x402 settle", /settlePayment|settleAt|chain-outcome\.ts/],
  [
    "the upstream request (credentials, SSRF, headers)",
    /upstreamParts|src\/gateway\/upstream\/(request|credentials)\.ts|ssrf\.ts|ipaddr/,
  ],
  ["the upstream call", /src\/gateway\/upstream\/call\.ts/],
  ["forward and fulfil", /src\/gateway\/pipeline\/(forward|fulfil)\.ts/],
  ["the x402 SDK's other work", /nm\/@x402|@ src\/(http|server|utils|schemas)\//],
  [
    "Hono, the access log, the origin's headers",
    /nm\/hono|src\/worker\.ts|src\/core\/http\/|src\/gateway\/(app|origin-headers)\.ts|transport\//,
  ],
];

const total = profile.samples.length;
const table = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(args.top))
    .map(([name, n]) => `${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`)
    .join("\n");
console.log(`${total} samples of worker "${args.worker}" over ${args.seconds} s (bundle ${dir})`);
if (args.groups) {
  const grouped = new Map<string, number>();
  for (const [id, count] of counts) {
    const stack: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(where(byId.get(at) as ProfileNode));
    const group = GROUPS.find(([, pattern]) => stack.some((frame) => pattern.test(frame)))?.[0] ?? "the rest";
    grouped.set(group, (grouped.get(group) ?? 0) + count);
  }
  console.log(`\ngroups:\n${table(grouped)}`);
}
console.log(`\nself time:\n${table(self)}`);
console.log(`\non the stack (synchronous frames only: an await's continuation starts a stack of its own):\n${table(onStack)}`);
