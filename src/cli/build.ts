// Production bundle: `npm run build` writes dist/worker.js, the script `npm run deploy` uploads.
// It differs from wrangler's own bundling in one way: zod's 60 locale modules are replaced by English,
// the only one the API uses (esbuild cannot tree-shake zod's `export * as locales`).
import { gzipSync } from "node:zlib";
import { build, type Plugin } from "esbuild";

const englishOnly: Plugin = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /locales\/index\.js$/ }, (args) =>
      args.importer.includes("/zod/") ? { path: "zod-locales", namespace: "zod-english-only" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-english-only" }, () => ({
      contents: `export { default as en } from ${JSON.stringify(`${process.cwd()}/node_modules/zod/v4/locales/en.js`)};`,
      resolveDir: process.cwd(),
    }));
  },
};

export async function buildWorker(outfile = "dist/worker.js") {
  const result = await build({
    entryPoints: ["src/index.ts"],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    minify: true,
    sourcemap: "external",
    metafile: true,
    legalComments: "none",
    plugins: [englishOnly],
    logLevel: "warning",
  });
  const [file] = Object.entries(result.metafile.outputs).filter(([name]) => name.endsWith(".js"));
  const bytes = file ? file[1].bytes : 0;
  const { readFileSync } = await import("node:fs");
  const gzip = gzipSync(readFileSync(outfile)).length;
  return { outfile, bytes, gzip };
}

if (import.meta.main) {
  const { outfile, bytes, gzip } = await buildWorker(process.argv[2]);
  console.log(`${outfile}: ${(bytes / 1024).toFixed(1)} KiB, gzip ${(gzip / 1024).toFixed(1)} KiB`);
}
