// Builds what the benchmark runs: the production bundle (exactly what `npm run deploy` uploads) and the fixtures.
import { build } from "esbuild";
import { buildWorker, GZIP_CEILING_KIB } from "../../src/cli/build.ts";

export interface AppBuild {
  scriptPath: string;
  /** esbuild's metafile of the build (every input and its imports). */
  metafilePath: string;
  /** How the bundle was made. */
  bundler: string;
  /** Bytes of the bundle (the worker script, without its source map). */
  bytes: number;
  /** gzip size as wrangler reports it ("Total Upload: … / gzip: … KiB"), if found in its output. */
  wranglerGzipKiB: number | undefined;
  /** gzip -6 of the bundle computed here. */
  gzipKiB: number;
  /** The regression ceiling `npm run build` holds the bundle to (gzip KiB). */
  ceilingKiB: number;
  ms: number;
}

/**
 * The production bundle, made as `npm run build` (and so `npm run deploy`) makes it: src/cli/build.ts, i.e.
 * `wrangler deploy --dry-run --outdir <outdir>`, which bundles as `wrangler deploy` does and writes exactly what would
 * be uploaded.
 */
export async function buildApp(outdir: string): Promise<AppBuild> {
  const start = performance.now();
  const built = await buildWorker(outdir);
  return {
    scriptPath: built.scriptPath,
    metafilePath: built.metafilePath,
    bundler: "wrangler deploy --dry-run (src/cli/build.ts)",
    bytes: built.bytes,
    wranglerGzipKiB: built.wranglerGzipKiB,
    gzipKiB: built.gzipKiB,
    ceilingKiB: GZIP_CEILING_KIB,
    ms: Math.round(performance.now() - start),
  };
}

/** Bundles a fixture worker with the same kind of settings wrangler uses (ESM, workerd conditions, no minification). */
export async function bundleFixture(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "error",
  });
  return outfile;
}
