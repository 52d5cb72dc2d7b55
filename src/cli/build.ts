// Production bundle: `npm run build` writes dist/index.js and its source map, as `wrangler deploy` uploads them. It is
// wrangler's own bundling (`wrangler deploy --dry-run --outdir`), with wrangler.toml's settings and nothing else: the
// module graph `wrangler dev` serves and the workerd tests load (vitest resolves the same packages through the same
// export conditions), minified. No library file is rewritten or left out, and package.json forces no dependency's
// version: a payment SDK's update ships as its authors tested it. `npm run deploy` runs this build, then
// `wrangler deploy`, which bundles the same inputs the same way (the same bytes) and uploads them.
//
// The size is a regression guard, not a budget: the build fails above GZIP_CEILING_KIB. What the edge pays for is
// the Worker's startup CPU, measured by `npm run bench` (test/bench/startup.ts) against Cloudflare's startup limit.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The most the Worker may weigh, gzip: 1 MiB, a generous ceiling that only catches a regression (a dependency
 * duplicated or pulled in whole by mistake). Cloudflare's own limit on a Worker's size is far above it
 * (https://developers.cloudflare.com/workers/platform/limits/#worker-size).
 */
export const GZIP_CEILING_KIB = 1024;

export interface BuiltWorker {
  /** The bundle wrangler would upload (`<outdir>/index.js`), its source map next to it. */
  scriptPath: string;
  /** esbuild's metafile of the build (`<outdir>/bundle-meta.json`): every input and its imports. */
  metafilePath: string;
  bytes: number;
  /** gzip -6 of the bundle. */
  gzipKiB: number;
  /** gzip size as wrangler reports it ("Total Upload: … / gzip: … KiB"), if found in its output. */
  wranglerGzipKiB: number | undefined;
  /** wrangler's output. */
  output: string;
}

/** `wrangler deploy --dry-run --outdir <outdir>`: the Worker bundled as `wrangler deploy` uploads it, not uploaded. */
export async function buildWorker(outdir = join(ROOT, "dist")): Promise<BuiltWorker> {
  const metafilePath = join(outdir, "bundle-meta.json");
  const output = await new Promise<string>((done, fail) => {
    // wrangler with this Node (wrangler needs ≥ 22), telemetry off.
    const child = spawn(
      process.execPath,
      [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "deploy",
        "--dry-run",
        "--config",
        join(ROOT, "wrangler.toml"),
        "--outdir",
        outdir,
        "--metafile",
        metafilePath,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let text = "";
    child.stdout.on("data", (d: Buffer) => {
      text += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      text += d;
    });
    child.on("error", fail);
    child.on("close", (code) =>
      code === 0 ? done(text) : fail(new Error(`wrangler deploy --dry-run failed (${code}):\n${text}`)),
    );
  });
  const scriptPath = join(outdir, "index.js");
  const bundle = await readFile(scriptPath);
  const match = /Total Upload:\s*[\d.]+\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
  return {
    scriptPath,
    metafilePath,
    bytes: bundle.length,
    gzipKiB: Math.round((gzipSync(bundle).length / 1024) * 100) / 100,
    wranglerGzipKiB: match ? Number(match[1]) : undefined,
    output,
  };
}

if (import.meta.main) {
  const outdir = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const built = await buildWorker(outdir);
  const gzip = built.wranglerGzipKiB ?? built.gzipKiB;
  console.log(
    `${built.scriptPath}: ${(built.bytes / 1024).toFixed(1)} KiB, gzip ${gzip.toFixed(1)} KiB (ceiling ${GZIP_CEILING_KIB} KiB)`,
  );
  if (gzip > GZIP_CEILING_KIB) {
    console.error(`The Worker is ${gzip.toFixed(1)} KiB gzip, over the ${GZIP_CEILING_KIB} KiB ceiling (src/cli/build.ts).`);
    process.exit(1);
  }
}
