// Builds what the benchmark runs: the production bundle (exactly what `wrangler deploy` would upload) and the fixtures.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export interface AppBuild {
  scriptPath: string;
  /** How the bundle was made: the project's own build (src/cli/build.ts, as `npm run deploy`) or wrangler's bundler. */
  bundler: "src/cli/build.ts" | "wrangler";
  /** Bytes of the bundle (the worker script, without its source map). */
  bytes: number;
  /** gzip size as wrangler reports it ("Total Upload: … / gzip: … KiB"), if found in its output. */
  wranglerGzipKiB: number | undefined;
  /** gzip -6 of the bundle computed here. */
  gzipKiB: number;
  ms: number;
}

/** Runs wrangler with this Node (wrangler needs ≥ 22), telemetry off; resolves with its output. */
function wrangler(root: string, args: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "node_modules/wrangler/bin/wrangler.js"), ...args], {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stdout.on("data", (d: Buffer) => {
      text += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      text += d;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`wrangler ${args[0]} failed (${code}):\n${text}`)),
    );
  });
}

/**
 * The production bundle, made the way `npm run deploy` makes it: src/cli/build.ts (esbuild, minified) then
 * `wrangler deploy --dry-run --no-bundle --outdir <outdir>/upload`, which prints the upload size and gzip size and
 * writes exactly what would be uploaded. Without src/cli/build.ts: `wrangler deploy --dry-run --outdir`.
 */
export async function buildApp(root: string, outdir: string): Promise<AppBuild> {
  const start = performance.now();
  const config = join(root, "wrangler.toml");
  let bundler: AppBuild["bundler"] = "wrangler";
  let output: string;
  let scriptPath: string;
  const projectBuild = join(root, "src/cli/build.ts");
  if (existsSync(projectBuild)) {
    bundler = "src/cli/build.ts";
    const { buildWorker } = (await import(pathToFileURL(resolve(projectBuild)).href)) as {
      buildWorker: (outfile: string) => Promise<{ outfile: string }>;
    };
    const built = await buildWorker(join(outdir, "worker.js"));
    output = await wrangler(root, [
      "deploy",
      "--dry-run",
      "--no-bundle",
      "--config",
      config,
      "--outdir",
      join(outdir, "upload"),
      built.outfile,
    ]);
    scriptPath = join(outdir, "upload", basename(built.outfile));
  } else {
    output = await wrangler(root, ["deploy", "--dry-run", "--config", config, "--outdir", outdir]);
    scriptPath = join(outdir, "index.js");
  }
  const bundle = await readFile(scriptPath);
  const match = /Total Upload:\s*[\d.]+\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
  return {
    scriptPath,
    bundler,
    bytes: bundle.length,
    wranglerGzipKiB: match ? Number(match[1]) : undefined,
    gzipKiB: Math.round((gzipSync(bundle).length / 1024) * 100) / 100,
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
