// The longest functions under some folders, in lines (signature to closing brace), read from the layout the
// formatter gives: `npm run -s fn-lengths -- src/gateway src/dashboard [--top N]`. A block-bodied function is a line
// ending in `{` that is a `function`, an arrow (`=> {`) or a method signature; it ends at the next line of its indent
// that starts with `}`. Expression-bodied arrows are not counted. (The installed TypeScript has no compiler API.)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 5;
const roots = topAt >= 0 ? args.filter((_, i) => i !== topAt && i !== topAt + 1) : args;

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });

const indentOf = (line: string) => line.length - line.trimStart().length;
const CONTROL = /^(\}\s*)?(if|else|for|while|switch|try|catch|finally|do|return|throw)\b/;
const METHOD =
  /^(?:(?:export|default|async|static|private|public|protected|readonly|override|get|set)\s+)*[A-Za-z_$#][\w$]*\s*(?:<.*>)?\(.*\)\s*(?::.*)?\{$/s;

/** Each block-bodied function of a source: where it starts, its name and its length in lines. */
export function functionLengths(source: string): { line: number; name: string; lines: number }[] {
  const lines = source.split("\n").map((l) => l.replace(/\s*\/\/.*$/, "").trimEnd());
  const found: { line: number; name: string; lines: number }[] = [];
  for (const [i, line] of lines.entries()) {
    if (!line.endsWith("{")) continue;
    const indent = indentOf(line);
    let start = i;
    if (/^\s*[)}]/.test(line)) {
      while (start > 0 && !(indentOf(lines[start - 1] as string) === indent && !/^\s*[)}]/.test(lines[start - 1] as string)))
        start--;
      start = Math.max(0, start - 1);
    }
    const header = lines
      .slice(start, i + 1)
      .map((l) => l.trim())
      .join(" ");
    if (CONTROL.test(header)) continue;
    if (!(/\bfunction\b/.test(header) || /=>\s*\{$/.test(header) || METHOD.test(header))) continue;
    let end = i + 1;
    while (end < lines.length && !(indentOf(lines[end] as string) === indent && (lines[end] as string).trim().startsWith("}")))
      end++;
    const name =
      /(?:function\s*\*?\s*|const\s+|let\s+)?([A-Za-z_$#][\w$.]*)/.exec(
        header.replace(/^(?:(?:export|default|async|static|private|public|get|set)\s+)+/, ""),
      )?.[1] ?? "?";
    found.push({ line: start + 1, name, lines: end - start + 1 });
  }
  return found;
}

/** Every block-bodied function in the files under `root`, longest first. */
export function longestUnder(root: string) {
  const all = files(root).flatMap((file) => functionLengths(readFileSync(file, "utf8")).map((f) => ({ ...f, file })));
  return all.sort((a, b) => b.lines - a.lines);
}

if (import.meta.main) {
  for (const root of roots) {
    const all = longestUnder(root);
    console.log(`${root}: ${all.length} functions; longest:`);
    for (const f of all.slice(0, top)) console.log(`  ${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}`);
  }
}
