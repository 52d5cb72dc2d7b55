// Production bundle: `npm run build` writes dist/worker.js, the script `npm run deploy` uploads.
// It differs from wrangler's own bundling in two ways: zod's 60 locale modules are replaced by English,
// the only one the API uses (esbuild cannot tree-shake zod's `export * as locales`); and mppx's browser payment
// page (`mppx/dist/tempo/server/internal/html.gen.js`, ~720 KB of inlined script, imported by its tempo server) is
// an empty page: the gateway answers API clients and never serves it.
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

const noMppxPaymentPage: Plugin = {
  name: "no-mppx-payment-page",
  setup(b) {
    b.onResolve({ filter: /\/internal\/html\.gen\.js$/ }, (args) =>
      args.importer.replaceAll("\\", "/").includes("/mppx/dist/tempo/server/")
        ? { path: "mppx-html", namespace: "no-mppx-payment-page" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "no-mppx-payment-page" }, () => ({ contents: 'export const html = "";' }));
    // The MCP SDK, which mppx's server imports on its MCP path only (the same alias as wrangler.toml's).
    b.onResolve({ filter: /^@modelcontextprotocol\/sdk\/types\.js$/ }, () => ({
      path: `${process.cwd()}/src/gateway/mcp-sdk-stub.ts`,
    }));
  },
};

/** The bundler plugins of the production build (also used to measure what each part of the bundle costs). */
export const buildPlugins = [englishOnly, noMppxPaymentPage];

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
    plugins: buildPlugins,
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
