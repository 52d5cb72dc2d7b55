// Builds what the benchmark runs: the production bundle (exactly what `npm run deploy` uploads) and the fixtures.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { buildWorker, GZIP_CEILING_KIB } from "../../src/cli/build.ts";

export interface AppBuild {
  scriptPath: string;
  /** esbuild's metafile of the build (every input and its imports), if there is one. */
  metafilePath: string | undefined;
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

/**
 * A bundle built elsewhere (`--script`, e.g. another branch's build, to compare two builds on the same machine); its
 * metafile is `bundle-meta.json` next to it, if there.
 */
export async function prebuiltApp(scriptPath: string): Promise<AppBuild> {
  const bundle = await readFile(scriptPath);
  const metafilePath = join(dirname(scriptPath), "bundle-meta.json");
  return {
    scriptPath,
    metafilePath: existsSync(metafilePath) ? metafilePath : undefined,
    bundler: `prebuilt ${scriptPath}`,
    bytes: bundle.length,
    wranglerGzipKiB: undefined,
    gzipKiB: Math.round((gzipSync(bundle).length / 1024) * 100) / 100,
    ceilingKiB: GZIP_CEILING_KIB,
    ms: 0,
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

/**
 * A wrapper around the production bundle (fixtures/d1-count.ts), written beside it: its import of `__APP__` names the
 * bundle's own file, so the wrapper runs exactly the bundle's code.
 */
export async function bundleAppWrapper(entry: string, appScript: string, name: string): Promise<string> {
  const outfile = join(dirname(appScript), name);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*", "__APP__"],
    logLevel: "error",
  });
  const text = await readFile(outfile, "utf8");
  await writeFile(outfile, text.replaceAll('"__APP__"', JSON.stringify(`./${basename(appScript)}`)));
  return outfile;
}
