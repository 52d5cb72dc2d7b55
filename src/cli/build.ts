// Production bundle: `npm run build` writes dist/worker.js, the script `npm run deploy` uploads.
// It differs from wrangler's own bundling in that parts of the libraries the Worker never runs are left out, so the
// whole Worker stays under its 300 KiB gzip budget (issue 12, "Performance"; `GZIP_LIMIT_KIB` below):
// - zod: its 60 locale modules are English only, the one the API uses (esbuild cannot tree-shake zod's
//   `export * as locales`); `z.compile` (it generates code with `new Function`, which Workers forbid),
//   `z.fromJSONSchema` and zod's JSON Schema output (nothing here reads or writes JSON Schema: the OpenAPI document
//   comes from zod-to-openapi's own walk of the schemas) throw when called.
// - viem's Multicall3 bytecode (deployless batched calls; no client in the Worker batches calls).
// - ox: private keys from a BIP-39 mnemonic throw (the Worker holds no wallet); and its barrels are narrowed to the
//   namespaces each importer names (`narrowOxBarrels`, same modules).
// - mppx's browser payment page: its tempo server's inlined page (`internal/html.gen.js`, ~720 KB of script), the
//   server's page template and service worker (`server/internal/html/config.js`, `serviceWorker.gen.js`): the gateway
//   answers API clients and never serves a page, so the page is empty and rendering one throws.
// - `mppx/server`, imported by src/gateway/mpp/mppx.ts only, is `Mppx` (mppx's server/Mppx.js, unchanged) and `tempo` =
//   `{ charge }` (its tempo/server/Charge.js, unchanged): the package index also loads the session and subscription
//   intents, the Stripe and EVM methods, which the gateway never offers.
// - `viem/tempo`, imported from mppx's server-side files and src/gateway/mpp/tempo-transaction.ts, is the members they read, taken by
//   name from viem's own modules (`Abis.tip20`, `Abis.stablecoinDex`, `Transaction`, `Addresses`, `TokenId`). The
//   `Actions` it names (token metadata and balances, fee tokens, the DEX, access keys) and `withFeePayer` serve paths
//   the gateway never takes — a fee payer (local or remote), the payment page's amount, proof credentials — and throw,
//   naming themselves, if ever called. A member not listed fails the build when imported by name, and throws a named
//   error when read off `Abis`/`Actions`/`Transaction` at run time (never a silent `undefined`).
// - `viem/actions`, imported from mppx's tempo server files, is the actions they call, by name from viem's modules;
//   `verifyTypedData` (and with it viem's smart-account signature verification) checks mppx's proof credentials,
//   which only a zero-amount charge takes: a paywall's price is at least 1 micro-USDC, so it throws if ever called.
// - viem's Tempo chains (`tempo`, `tempoModerato`, read by mppx and by src/gateway/mpp/mppx.ts) keep their definitions
//   but their chain config is the part the gateway's client uses: the formatters (blocks, transactions, receipts,
//   requests) and the transaction serializer. Left out: the hooks that prepare and sign a transaction for an account
//   (fee tokens, nonces, configurable and access-key accounts) and `verifyHash` for account signatures, which pull
//   in every Tempo action; the gateway only simulates and sends a transaction its buyer signed.
// - viem's tempo ABI module builds its combined ABIs (`core`, `earn`, `all`, …) with array spreads, which esbuild must
//   keep as possibly side-effecting, and with them every ABI: those spreads are marked pure (same values), so ABIs
//   nothing reads are dropped.
// Two more come from package.json `overrides`, so every run (tests, dev, build) has them: @x402/core and @x402/evm use
// the project's zod 4 (their schemas are plain object/string/record/union schemas zod 4 parses the same way) instead
// of a second zod 3, and mppx uses viem's ox 0.14.59 (and its abitype) instead of a second copy, 0.14.33.
// The substitutions (`moduleSubstitutions`, `fileSubstitutions`) are applied the same way where the gateway's tests run
// (vitest.gateway.config.ts), so the tests pay through the shape that ships — but for the two marked `bundleOnly`
// (the slim `viem/tempo` and the Tempo chain config), which a buyer needs whole and the tests run buyers in the same
// runtime. The production bundle itself, all of it, runs in the browser tests and takes x402 and MPP payments in
// test/localnet/bundle.test.ts.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build, type Plugin } from "esbuild";

const nodeModules = (path: string) => `${process.cwd()}/node_modules/${path}`.replaceAll("\\", "/");
const unixPath = (path: string) => path.replaceAll("\\", "/");

/** A function left out of the Worker: calling it throws, naming it and where it was left out. */
const leftOut = `const leftOut = (name) => () => { throw new Error(name + " is left out of the Worker bundle (src/cli/build.ts)"); };`;

/** Reading a member a substitution does not carry throws, naming it, instead of answering `undefined`. */
const strictObject = `const strict = (name, o) => new Proxy(o, { get(t, k) {
  if (typeof k === "string" && !(k in t)) throw new Error("viem/tempo: " + name + "." + k + " is not in the Worker's slim viem/tempo (src/cli/build.ts)");
  return Reflect.get(t, k);
} });`;

/** Every function, class or const `source` exports (but `except`), as a function that throws naming `what`. */
function stubExports(source: string, what: string, except: string[] = []): string {
  const names = [...source.matchAll(/^export (?:async )?(?:function\*?|const|let|class) (\w+)/gm)].map(
    ([, name]) => name as string,
  );
  return names
    .filter((name) => !except.includes(name))
    .map((name) => `export const ${name} = leftOut(${JSON.stringify(`${what} (${name})`)});`)
    .join("\n");
}

/** One module substitution: `specifier`, when imported from a file whose path matches `importer`, is `contents`. */
export interface ModuleSubstitution {
  specifier: string;
  importer: RegExp;
  contents: () => string;
  /**
   * Leaves out what a buyer needs (mppx's client shares these modules; viem's account flows prepare transactions with
   * the chain's hooks). The Worker has no buyer, but the workerd gateway tests run their buyers next to it in one
   * runtime: these apply to the production bundle only, whose payments test/localnet/bundle.test.ts proves.
   */
  bundleOnly?: true;
}

/** One file substitution: a file whose path matches `file` is `contents` instead (relative imports resolve next to it). */
export interface FileSubstitution {
  file: RegExp;
  contents: () => string;
}

export const moduleSubstitutions: ModuleSubstitution[] = [
  {
    specifier: "mppx/server",
    importer: /\/src\/gateway\/mpp\/mppx\.ts$/,
    contents: () => `export * as Mppx from ${JSON.stringify(nodeModules("mppx/dist/server/Mppx.js"))};
import { charge } from ${JSON.stringify(nodeModules("mppx/dist/tempo/server/Charge.js"))};
export const tempo = Object.freeze({ charge });
`,
  },
  {
    specifier: "viem/tempo",
    bundleOnly: true,
    // mppx's server side (its charge server, their helpers, its viem client) and the gateway's own Tempo transaction
    // facts (src/gateway/mpp/tempo-transaction.ts, `Transaction` only): mppx's buyer client keeps the whole viem/tempo.
    importer: /\/node_modules\/mppx\/dist\/(tempo\/(server|internal)|viem)\/|\/src\/gateway\/mpp\/tempo-transaction\.ts$/,
    contents: () => {
      const viem = (file: string) => JSON.stringify(nodeModules(`viem/_esm/tempo/${file}`));
      return `${strictObject}
${leftOut}
import { tip20, stablecoinDex } from ${viem("Abis.js")};
import * as Tx from ${viem("Transaction.js")};
import * as Addr from ${viem("Addresses.js")};
export { TokenId } from ${JSON.stringify(nodeModules("ox/_esm/tempo/index.js"))};
export const withFeePayer = leftOut("viem/tempo withFeePayer (a remote fee payer)");
export const Abis = strict("Abis", { tip20, stablecoinDex });
export const Transaction = strict("Transaction", Tx);
export const Addresses = strict("Addresses", Addr);
const action = (name) => Object.assign(leftOut("viem/tempo Actions." + name), { call: leftOut("viem/tempo Actions." + name + ".call") });
export const Actions = strict("Actions", {
  token: strict("Actions.token", { getMetadata: action("token.getMetadata"), getBalance: action("token.getBalance"), approve: action("token.approve") }),
  accessKey: strict("Actions.accessKey", { getMetadata: action("accessKey.getMetadata") }),
  fee: strict("Actions.fee", { getUserToken: action("fee.getUserToken") }),
  dex: strict("Actions.dex", { getBuyQuote: action("dex.getBuyQuote"), buy: action("dex.buy") }),
});
`;
    },
  },
  {
    specifier: "viem/actions",
    importer: /\/node_modules\/mppx\/dist\/tempo\/(server|internal)\//,
    contents: () => {
      const viem = (file: string) => JSON.stringify(nodeModules(`viem/_esm/actions/${file}`));
      return `${leftOut}
export { call } from ${viem("public/call.js")};
export { getTransactionReceipt } from ${viem("public/getTransactionReceipt.js")};
export { readContract } from ${viem("public/readContract.js")};
export { sendRawTransaction } from ${viem("wallet/sendRawTransaction.js")};
export { sendRawTransactionSync } from ${viem("wallet/sendRawTransactionSync.js")};
export { signTransaction } from ${viem("wallet/signTransaction.js")};
export const verifyTypedData = leftOut("viem/actions verifyTypedData (mppx's proof credentials, zero-amount charges only)");
`;
    },
  },
  {
    specifier: "../../tempo/chainConfig.js",
    bundleOnly: true,
    importer: /\/node_modules\/viem\/_esm\/chains\/definitions\/tempo\w*\.js$/,
    contents: () => {
      const viem = (file: string) => JSON.stringify(nodeModules(`viem/_esm/${file}`));
      return `import * as Formatters from ${viem("tempo/Formatters.js")};
import * as Transaction from ${viem("tempo/Transaction.js")};
import { defineTransaction } from ${viem("utils/formatters/transaction.js")};
import { defineTransactionReceipt } from ${viem("utils/formatters/transactionReceipt.js")};
import { defineTransactionRequest } from ${viem("utils/formatters/transactionRequest.js")};
export const chainConfig = {
  blockTime: 1_000,
  formatters: {
    block: { format: (block) => Formatters.formatBlock(block), type: "block" },
    transaction: {
      ...defineTransaction({ exclude: ["aaAuthorizationList"], format: Formatters.formatTransaction }),
      format: (transaction) => Formatters.formatTransaction(transaction),
    },
    transactionReceipt: defineTransactionReceipt({ format: Formatters.formatTransactionReceipt }),
    transactionRequest: defineTransactionRequest({ format: Formatters.formatTransactionRequest }),
  },
  serializers: { transaction: (transaction, signature) => Transaction.serialize(transaction, signature) },
};
`;
    },
  },
];

export const fileSubstitutions: FileSubstitution[] = [
  {
    file: /\/node_modules\/zod\/v4\/core\/compile\.js$/,
    contents: () => `${leftOut}
export const INVALID = Symbol.for("zod.compile.invalid");
export class ZodCompileAsyncError extends Error {}
export class ZodCompileUnsupportedError extends Error {}
export const compile = leftOut("z.compile");
export const compileFn = leftOut("z.compile");
export const withParser = leftOut("z.compile");
`,
  },
  {
    file: /\/node_modules\/zod\/v4\/classic\/from-json-schema\.js$/,
    contents: () => `${leftOut}\nexport const fromJSONSchema = leftOut("z.fromJSONSchema");\n`,
  },
  {
    // zod's JSON Schema output (`z.toJSONSchema`, `schema.toJSONSchema()`, Standard JSON Schema): nothing in the Worker
    // writes JSON Schema (the OpenAPI document comes from zod-to-openapi's own walk of the schemas). Kept: the module's
    // head up to `aggregateChecks`, which schemas' `minLength`/`maxLength`/`minValue`/`format` getters read.
    file: /\/node_modules\/zod\/v4\/core\/json-schema-processors\.js$/,
    contents: () => {
      const source = readFileSync(nodeModules("zod/v4/core/json-schema-processors.js"), "utf8");
      const cut = source.indexOf("\nconst formatMap = {");
      if (cut === -1 || !source.slice(0, cut).includes("export function aggregateChecks(")) {
        throw new Error("zod's json-schema-processors.js changed: review its substitution (src/cli/build.ts)");
      }
      const head = source.slice(0, cut).replace(/^import \{[^}]*\} from "\.\/to-json-schema\.js";$/m, "");
      return `${leftOut}\n${head}\n${stubExports(source.slice(cut), "zod's JSON Schema output")}`;
    },
  },
  {
    file: /\/node_modules\/zod\/v4\/core\/to-json-schema\.js$/,
    contents: () => {
      const source = readFileSync(nodeModules("zod/v4/core/to-json-schema.js"), "utf8");
      const factories = ["createToJSONSchemaMethod", "createStandardJSONSchemaMethod"];
      const rest = stubExports(source, "zod's JSON Schema output", factories);
      return `${leftOut}\n${rest}\n${factories.map((name) => `export const ${name} = () => leftOut("zod's JSON Schema output");`).join("\n")}\nexport { processSchema as process };\n`;
    },
  },
  {
    // viem's Multicall3 bytecode (11 KB of hex): a client with `batch.multicall` on a chain without a Multicall3
    // contract sends its batched `eth_call`s through it. No client in the Worker batches calls; using it throws.
    file: /\/node_modules\/viem\/_esm\/constants\/contracts\.js$/,
    contents: () => {
      const source = readFileSync(nodeModules("viem/_esm/constants/contracts.js"), "utf8");
      const pattern = /^export const multicall3Bytecode = '0x[0-9a-f]+';$/m;
      if (!pattern.test(source))
        throw new Error("viem's constants/contracts.js changed: review its substitution (src/cli/build.ts)");
      return source.replace(
        pattern,
        `export const multicall3Bytecode = new Proxy({}, { get() { throw new Error("viem's Multicall3 bytecode is left out of the Worker bundle (src/cli/build.ts)"); } });`,
      );
    },
  },
  {
    // ox's keys from a BIP-39 mnemonic (`Secp256k1.fromMnemonic`, `P256.fromMnemonic`): the Worker holds no wallet.
    file: /\/node_modules\/ox\/_esm\/core\/internal\/mnemonic\.js$/,
    contents: () =>
      `${leftOut}\n${stubExports(readFileSync(nodeModules("ox/_esm/core/internal/mnemonic.js"), "utf8"), "ox's mnemonic keys")}\n`,
  },
  {
    file: /\/node_modules\/mppx\/dist\/tempo\/server\/internal\/html\.gen\.js$/,
    contents: () => 'export const html = "";\n',
  },
  {
    file: /\/node_modules\/mppx\/dist\/server\/internal\/html\/config\.js$/,
    contents: () => `${leftOut}
export { attrs, classNames, ids, params } from "./constants.js";
export const vars = {};
export const defaultText = {};
export const defaultTheme = {};
export const resolveOptions = leftOut("mppx's payment page");
export const render = leftOut("mppx's payment page");
export const mergeDefined = leftOut("mppx's payment page");
`,
  },
  {
    file: /\/node_modules\/mppx\/dist\/server\/internal\/html\/serviceWorker\.gen\.js$/,
    contents: () => 'export const serviceWorker = "";\n',
  },
];

const englishOnly: Plugin = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /locales\/index\.js$/ }, (args) =>
      args.importer.includes("/zod/") ? { path: "zod-locales", namespace: "zod-english-only" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-english-only" }, () => ({
      contents: `export { default as en } from ${JSON.stringify(nodeModules("zod/v4/locales/en.js"))};`,
      resolveDir: process.cwd(),
    }));
  },
};

const mcpSdkStub: Plugin = {
  name: "mcp-sdk-stub",
  setup(b) {
    // The MCP SDK, which mppx's server imports on its MCP path only (the same alias as wrangler.toml's).
    b.onResolve({ filter: /^@modelcontextprotocol\/sdk\/types\.js$/ }, () => ({
      path: `${process.cwd()}/src/gateway/mpp/mcp-sdk-stub.ts`,
    }));
  },
};

const substitutions: Plugin = {
  name: "module-substitutions",
  setup(b) {
    moduleSubstitutions.forEach(({ specifier, importer }, i) => {
      const filter = new RegExp(`^${specifier.replaceAll("/", "\\/")}$`);
      b.onResolve({ filter }, (args) =>
        importer.test(args.importer.replaceAll("\\", "/")) ? { path: String(i), namespace: "module-substitution" } : undefined,
      );
    });
    b.onLoad({ filter: /.*/, namespace: "module-substitution" }, (args) => ({
      contents: moduleSubstitutions[Number(args.path)]?.contents(),
      resolveDir: process.cwd(),
    }));
    for (const { file, contents } of fileSubstitutions) {
      b.onLoad({ filter: file }, (args) => ({
        contents: contents(),
        loader: "js",
        resolveDir: unixPath(args.path).replace(/\/[^/]*$/, ""),
      }));
    }
  },
};

/**
 * ox's barrels (`ox`, `ox/tempo`) are lists of `export * as Name from "./file.js"`. Reached through the gateway's lazy
 * `import("./mppx.ts")`, esbuild wraps their modules for lazy evaluation and then keeps every namespace a barrel
 * lists (CBOR, HD keys, providers, …). Each importer instead gets a barrel of the namespaces it imports by name:
 * the same modules, so the same values.
 */
const narrowOxBarrels: Plugin = {
  name: "narrow-ox-barrels",
  setup(b) {
    const barrels: Record<string, string> = { ox: "ox/_esm/index.js", "ox/tempo": "ox/_esm/tempo/index.js" };
    const files = new Map<string, Map<string, string>>();
    const namespacesOf = (barrel: string) => {
      let map = files.get(barrel);
      if (!map) {
        const file = nodeModules(barrel);
        const dir = file.replace(/\/[^/]*$/, "");
        map = new Map(
          [...readFileSync(file, "utf8").matchAll(/^export \* as (\w+) from '(\.[^']+)';$/gm)].map(([, n, f]) => [
            n as string,
            `${dir}/${(f as string).slice(2)}`,
          ]),
        );
        files.set(barrel, map);
      }
      return map;
    };
    b.onResolve({ filter: /^ox(\/tempo)?$/ }, (args) => {
      if (!args.importer.includes("/node_modules/")) return undefined;
      const source = readFileSync(args.importer, "utf8");
      const from = `\\s*from\\s*['"]${args.path.replace("/", "\\/")}['"]`;
      // A whole-barrel import or re-export (`* as`, `export *`) keeps the barrel as it is.
      if (new RegExp(`(import|export)\\s*\\*[^;]*?${from}`).test(source)) return undefined;
      const names = [...source.matchAll(new RegExp(`(?:import|export)\\s*{([^}]*)}${from}`, "g"))].flatMap(([, list]) =>
        (list as string)
          .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "")
          .split(",")
          .map((n) => n.trim().split(/\s+as\s+/)[0] as string)
          .filter(Boolean),
      );
      if (names.length === 0) return undefined;
      return { path: `${args.path}|${[...new Set(names)].sort().join(",")}`, namespace: "narrow-ox-barrel" };
    });
    b.onLoad({ filter: /.*/, namespace: "narrow-ox-barrel" }, (args) => {
      const [barrel = "", list = ""] = args.path.split("|");
      const map = namespacesOf(barrels[barrel] as string);
      const lines = list.split(",").map((name) => {
        const file = map.get(name);
        if (!file) throw new Error(`${barrel} has no namespace ${name} (src/cli/build.ts narrowOxBarrels)`);
        return `export * as ${name} from ${JSON.stringify(file)};`;
      });
      return { contents: lines.join("\n"), resolveDir: process.cwd() };
    });
  },
};

const pureTempoAbis: Plugin = {
  name: "pure-tempo-abis",
  setup(b) {
    b.onLoad({ filter: /\/viem\/_esm\/tempo\/Abis\.js$/ }, async (args) => {
      const source = readFileSync(args.path, "utf8").replace(
        /^export const (\w+) = (\[(?:\s*\.\.\.\w+,?)+\s*\]);/gm,
        (_, name, array) => `export const ${name} = /* @__PURE__ */ (() => ${array})();`,
      );
      return { contents: source, loader: "js" };
    });
  },
};

/** The bundler plugins of the production build (also used to measure what each part of the bundle costs). */
export const buildPlugins = [englishOnly, mcpSdkStub, substitutions, narrowOxBarrels, pureTempoAbis];

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
  const gzip = gzipSync(readFileSync(outfile)).length;
  return { outfile, bytes, gzip };
}

/**
 * The most the Worker may weigh, gzip: the budget of issue 12 ("Performance"). `npm run build` (and so .ci/run) fails
 * above it, so a change that grows the bundle past it fails instead of passing unnoticed.
 */
export const GZIP_LIMIT_KIB = 300;

if (import.meta.main) {
  const { outfile, bytes, gzip } = await buildWorker(process.argv[2]);
  const kib = gzip / 1024;
  console.log(`${outfile}: ${(bytes / 1024).toFixed(1)} KiB, gzip ${kib.toFixed(1)} KiB (limit ${GZIP_LIMIT_KIB} KiB)`);
  if (kib > GZIP_LIMIT_KIB) {
    console.error(`The Worker is ${kib.toFixed(1)} KiB gzip, over the ${GZIP_LIMIT_KIB} KiB limit (src/cli/build.ts).`);
    process.exit(1);
  }
}
