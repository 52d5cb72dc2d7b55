/**
 * anvil (Foundry's local EVM node) from npm: `@foundry-rs/anvil-linux-amd64` ships the binary. It runs offline, listens
 * on 127.0.0.1 on a port the OS picks (unless one is given), and mines a block per transaction.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

export const ANVIL_BIN = join(import.meta.dirname, "../../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil");

export interface AnvilOptions {
  chainId: number;
  /** 0 (the default) lets the OS pick a free port. */
  port?: number;
  /** Extra arguments, e.g. `["--network", "tempo"]`. */
  args?: string[];
  /** How long to wait for "Listening on" (ms). */
  startTimeoutMs?: number;
}

export interface Anvil {
  rpcUrl: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Never leave an anvil behind when the Node process that started it ends. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

export async function startAnvil(options: AnvilOptions): Promise<Anvil> {
  installExitHook();
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(options.chainId),
    "--no-request-size-limit",
    ...(options.args ?? []),
  ];
  const child = spawn(ANVIL_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.on("exit", () => running.delete(child));

  const port = await new Promise<number>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`anvil did not start within ${options.startTimeoutMs ?? 15_000} ms`)),
      options.startTimeoutMs ?? 15_000,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${err.message}\n${output.slice(-2000)}`));
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        // Keep draining its output so a full pipe never blocks it.
        child.stdout!.resume();
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", fail);
    child.on("exit", (code, signal) => fail(new Error(`anvil exited (${code ?? signal}) before listening`)));
  });
  child.removeAllListeners("exit");
  child.on("exit", () => running.delete(child));

  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the process is gone. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
