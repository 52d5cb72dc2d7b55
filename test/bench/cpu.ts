// CPU time of the workerd process serving the run (Linux /proc), sampled around each load slice. CPU per request is
// far less sensitive to other tenants of a shared machine than req/s: it is reported next to the throughput figures.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** `/proc/<pid>/stat` fields after the command name: state is field 3, utime 14, stime 15 (1-based). */
function stat(pid: number): { ppid: number; comm: string; cpuTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    return { ppid: Number(fields[1]), comm, cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** The workerd child of this process (Miniflare spawns it), or undefined (not Linux, not found). */
export function findWorkerd(): number | undefined {
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const s = stat(Number(entry));
      if (s && s.ppid === process.pid && s.comm.startsWith("workerd")) return Number(entry);
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** A sampler of the process's user+system CPU time in milliseconds. */
export function cpuSampler(pid: number | undefined): () => number | undefined {
  if (pid === undefined) return () => undefined;
  return () => {
    const s = stat(pid);
    return s ? (s.cpuTicks / clockTicks()) * 1000 : undefined;
  };
}

/**
 * A sampler of the process's CPU time in nanoseconds: the sum of its threads' time on a CPU
 * (`/proc/<pid>/task/<tid>/schedstat`, first field), finer than `cpuSampler`'s clock ticks (10 ms).
 */
export function cpuNsOf(pid: number | undefined): () => number | undefined {
  if (pid === undefined) return () => undefined;
  return () => {
    try {
      let ns = 0;
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
        } catch {
          // the thread ended meanwhile
        }
      }
      return ns;
    } catch {
      return undefined;
    }
  };
}
