/**
 * `npm run bench:spread -- run1.json run2.json …` (files from `npm run bench -- --out <file>`): each target across
 * the runs, how many passed, and each run's figure, so a target is judged over several runs on a noisy machine rather
 * than one. Prints a Markdown table.
 */
import { readFileSync } from "node:fs";

interface Report {
  startedAt: string;
  targets: { name: string; status: "PASS" | "FAIL"; detail: string }[];
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: npm run bench:spread -- <bench.json> [<bench.json> …]");
  process.exit(2);
}
const runs = files.map((f) => JSON.parse(readFileSync(f, "utf8")) as Report);
/** The figure a target is judged by: the first percentage or ratio its detail gives, else its first number. */
const figure = (detail: string) =>
  /= ([\d.]+%)/.exec(detail)?.[1] ??
  /= ([\d.]+×)/.exec(detail)?.[1] ??
  /([\d.]+ (?:ms|statements\/req|KiB gzip))/.exec(detail)?.[1] ??
  "—";

console.log(`| Target | Passed | ${runs.map((_, i) => `Run ${i + 1}`).join(" | ")} |`);
console.log(`| --- | --- | ${runs.map(() => "---").join(" | ")} |`);
for (const { name } of runs[0]!.targets) {
  const results = runs.map((r) => r.targets.find((t) => t.name === name));
  const passed = results.filter((t) => t?.status === "PASS").length;
  const cells = results.map((t) => (t ? `${t.status === "PASS" ? "" : "**FAIL** "}${figure(t.detail)}` : "—"));
  console.log(`| ${name} | ${passed} of ${runs.length} | ${cells.join(" | ")} |`);
}
