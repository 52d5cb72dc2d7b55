/**
 * docs/architecture.md's tree names every file under src/: a file added, moved or renamed without its place in the
 * tree fails here, and the message lists the paths to add (and the entries whose file is gone). Runs on Node
 * (`npm run test:cli`); reads files only.
 *
 * How the tree is read (docs/architecture.md states the same rules under it):
 * - the first fenced block after "## The tree and its layers", two spaces of indentation a level;
 * - a line starts with its entries, separated by ", ": a name ending in `/` is a folder, a name with a dot (or one
 *   starting with `_`) a file; two or more spaces end the entries, and the rest is a description. A line that starts
 *   with no entry continues the one above it;
 * - an entry is a path below the folder(s) its line stands under; a file named in a description counts too, below the
 *   line's own folders (on a line of files: below the folder above it). `<resource>` in a path stands for any one folder;
 * - a folder's `index.ts` below src/ (it only hands a router on) needs no entry.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

const FILE_NAME = /^(?:[\w<>.-]+\/)*(?:[\w<>-]+(?:\.[\w-]+)+|_[\w-]+)$/;
const FOLDER_NAME = /^(?:[\w<>.-]+\/)+$/;
/** File names inside a description: a path ending in an extension the sources use, or a name starting with `_`. */
const NAMED_IN_TEXT = /(?<![\w./-])(?:[\w<>.-]+\/)*(?:[\w<>.-]+\.(?:tsx?|js|css|html|sol)\b|_[\w-]+)/g;

/** The tree block of the document. */
function treeOf(markdown: string): string[] {
  const start = markdown.indexOf("## The tree and its layers");
  assert.ok(start >= 0, 'docs/architecture.md has no "## The tree and its layers" section');
  const open = markdown.indexOf("```\n", start);
  const close = markdown.indexOf("\n```", open + 4);
  assert.ok(open >= 0 && close > open, "the tree section has no fenced block");
  return markdown.slice(open + 4, close).split("\n");
}

interface Named {
  /** Every path the tree names (entries and names in descriptions), as patterns. */
  patterns: RegExp[];
  /** The file entries, as written with their folders (what a reader takes for a file of the tree). */
  entries: { path: string; pattern: RegExp }[];
}

const patternOf = (path: string) => new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/<[\w-]+>/g, "[^/]+")}$`);

/** What the tree's lines name, by the rules above. */
function namedBy(lines: readonly string[]): Named {
  const named: Named = { patterns: [], entries: [] };
  /** Folders by depth: the folders each open line stands for. */
  const stack: { depth: number; folders: string[] }[] = [];
  let textBases: string[] = [""];
  for (const line of lines) {
    if (line.trim() === "") continue;
    const depth = (line.length - line.trimStart().length) / 2;
    const [head = "", ...rest] = line.trim().split(/\s{2,}/);
    const names = head.split(", ");
    const isEntryLine = names.every((name) => FILE_NAME.test(name) || FOLDER_NAME.test(name));
    let description = rest.join("  ");
    if (isEntryLine) {
      while (stack.length > 0 && stack.at(-1)!.depth >= depth) stack.pop();
      const parents = stack.at(-1)?.folders ?? [""];
      const folders: string[] = [];
      for (const parent of parents) {
        for (const name of names) {
          const path = parent + name;
          if (name.endsWith("/")) folders.push(path);
          else {
            named.patterns.push(patternOf(path));
            named.entries.push({ path, pattern: patternOf(path) });
          }
        }
      }
      if (folders.length > 0) stack.push({ depth, folders });
      textBases = folders.length > 0 ? folders : parents;
    } else {
      description = line.trim();
    }
    for (const [name] of description.matchAll(NAMED_IN_TEXT)) {
      for (const base of textBases) named.patterns.push(patternOf(base + name));
    }
  }
  return named;
}

/** Every file under `dir`, as a path from the repository's root. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** A folder's index.ts below src/ only hands a router on: it needs no entry. */
const exempt = (path: string) => /^src\/.+\/index\.ts$/.test(path);

/** The files the tree does not name, and the file entries that name no file. */
function compare(lines: readonly string[], files: readonly string[]) {
  const named = namedBy(lines);
  return {
    missing: files.filter((file) => !exempt(file) && !named.patterns.some((pattern) => pattern.test(file))),
    gone: named.entries
      .filter(({ path, pattern }) => path.startsWith("src/") && !files.some((file) => pattern.test(file)))
      .map(({ path }) => path),
  };
}

test("docs/architecture.md's tree names every file under src/, and no file that is gone", () => {
  const lines = treeOf(readFileSync(join(ROOT, "docs/architecture.md"), "utf8"));
  const { missing, gone } = compare(lines, filesUnder("src"));
  const problems = [
    ...(missing.length > 0
      ? [`Files under src/ that docs/architecture.md's tree does not name (add each to its folder's line):`, ...missing]
      : []),
    ...(gone.length > 0 ? ["Entries of docs/architecture.md's tree whose file is gone (remove or rename them):", ...gone] : []),
  ];
  assert.equal(problems.length, 0, `\n  ${problems.join("\n  ")}`);
});

test("the tree is read by its rules: entries, folders, descriptions, continuations, <resource>, index.ts", () => {
  const tree = [
    "src/",
    "  index.ts          entry",
    "  api/              the API",
    "    app.ts, env.ts    routes; types",
    "    middleware/       auth.ts (keys), cors.ts,",
    "                      and database.ts",
    "    routes/<resource>/  routes.ts, handlers.ts",
    "  gateway/          x402/flow.ts (the flow)",
    "    x402/, mpp/       flow.ts",
    "  public/           _headers, docs.js",
  ];
  const files = [
    "src/index.ts",
    "src/api/app.ts",
    "src/api/env.ts",
    "src/api/middleware/auth.ts",
    "src/api/middleware/cors.ts",
    "src/api/middleware/database.ts",
    "src/api/routes/services/routes.ts",
    "src/api/routes/services/handlers.ts",
    "src/api/routes/services/index.ts",
    "src/api/routes/paywalls/routes.ts",
    "src/gateway/x402/flow.ts",
    "src/gateway/mpp/flow.ts",
    "src/public/_headers",
    "src/public/docs.js",
  ];
  assert.deepEqual(compare(tree, files), { missing: [], gone: [] });
  assert.deepEqual(
    compare(tree.slice(0, -1), [
      ...files,
      "src/api/router.ts",
      "src/api/routes/services/schemas.ts",
      "src/gateway/pipeline/run.ts",
    ]),
    {
      missing: [
        "src/public/_headers",
        "src/public/docs.js",
        "src/api/router.ts",
        "src/api/routes/services/schemas.ts",
        "src/gateway/pipeline/run.ts",
      ],
      gone: [],
    },
  );
  assert.deepEqual(
    compare(
      tree,
      files.filter((file) => file !== "src/api/env.ts"),
    ).gone,
    ["src/api/env.ts"],
  );
});
