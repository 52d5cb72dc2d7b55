// The paid scenario's stand-in facilitator and upstream: stand-in-server.ts in a child process, and the clock it shares
// with the load generator.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { StandInEntry } from "./overhead.ts";

export const STAND_IN_HOSTS = { facilitator: "facilitator.gateway.test", upstream: "upstream.gateway.test" } as const;

/** The clock the runner and the stand-in process share: the system's monotonic clock (hrtime), in ms. */
export const clockMs = () => Number(process.hrtime.bigint()) / 1e6;

export interface StandIns {
  /** `127.0.0.1:<port>`, for Miniflare's `external` outbound service. */
  address: string;
  /** Takes the calls logged since the last read. */
  takeLog(): Promise<StandInEntry[]>;
  stop(): void;
}

/** Starts stand-in-server.ts on `port` (0: any free port) and waits until it listens. */
export async function startStandIns(port: number): Promise<StandIns> {
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, "stand-in-server.ts"), String(port)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const listening = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the stand-in server did not start within 10 s")), 10_000);
    child.once("exit", (code) => reject(new Error(`the stand-in server exited (${code})`)));
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const origin = `http://127.0.0.1:${listening}`;
  return {
    address: `127.0.0.1:${listening}`,
    takeLog: async () => (await (await fetch(`${origin}/__log`)).json()) as StandInEntry[],
    stop: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}
