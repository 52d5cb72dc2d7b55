// Sizes of the property-based tests, from the environment of the `vitest` process.
//
// Tests run inside workerd, where `process.env` is not the host's environment. Vite copies host variables with an allowed
// prefix into `import.meta.env`: `VITE_` always, `FUZZ_` too once vitest.config.ts lists it in `envPrefix`. So either
//   FUZZ_RUNS=500 FUZZ_MODEL_RUNS=200 npx vitest run test/adversarial           (with envPrefix: ["VITE_", "FUZZ_"])
//   VITE_FUZZ_RUNS=500 VITE_FUZZ_MODEL_RUNS=200 npx vitest run test/adversarial  (works without any config change)
// FUZZ_SEED (or VITE_FUZZ_SEED) replays a run: fast-check prints the seed of a failing run.
//
// Each variable is read as a plain `import.meta.env.NAME`: that form is resolved per run, while an aliased or
// optional-chained `import.meta.env` is inlined at transform time and can be served stale from Vite's transform cache.

declare global {
  interface ImportMeta {
    readonly env: ImportMetaEnv;
  }
  interface ImportMetaEnv {
    // biome-ignore lint/suspicious/noExplicitAny: the shape vite/client declares, so that both can coexist
    [key: string]: any;
  }
}

const VARIABLES: Record<string, string | undefined> = {
  FUZZ_RUNS: import.meta.env.FUZZ_RUNS ?? import.meta.env.VITE_FUZZ_RUNS,
  FUZZ_MODEL_RUNS: import.meta.env.FUZZ_MODEL_RUNS ?? import.meta.env.VITE_FUZZ_MODEL_RUNS,
  FUZZ_MODEL_COMMANDS: import.meta.env.FUZZ_MODEL_COMMANDS ?? import.meta.env.VITE_FUZZ_MODEL_COMMANDS,
  FUZZ_SEED: import.meta.env.FUZZ_SEED ?? import.meta.env.VITE_FUZZ_SEED,
};

export const envValue = (name: keyof typeof VARIABLES | string): string | undefined => VARIABLES[name];

/** A positive integer from the environment, or `fallback`. */
export function envInt(name: string, fallback: number): number {
  const raw = envValue(name);
  const n = raw === undefined || String(raw).trim() === "" ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

/** fast-check parameters: `numRuns`, plus the seed from FUZZ_SEED when set. */
export function fcParams(numRuns: number): { numRuns: number; seed?: number } {
  const seed = envValue("FUZZ_SEED");
  return seed !== undefined && String(seed).trim() !== "" && Number.isSafeInteger(Number(seed))
    ? { numRuns, seed: Number(seed) }
    : { numRuns };
}
