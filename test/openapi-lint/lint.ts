/**
 * Lints the served OpenAPI document with third-party tools (CI step; `npm run openapi` writes the file first):
 * - Redocly CLI, `recommended`: no error and no warning;
 * - Spectral, `spectral:oas`: no finding at all;
 * - Spectral, the OWASP API Security ruleset: no finding of a rule FINDINGS.md does not list with its reason.
 * Prints each rule's count and exits non-zero on the first broken promise.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const here = dirname(new URL(import.meta.url).pathname);
const bin = (name: string) => resolve(here, "../../node_modules/.bin", name);
const doc = resolve(process.argv[2] ?? "dist/openapi.json");

/** The tools exit non-zero when they find something; their JSON report is what counts here. */
function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });
  } catch (err) {
    const out = (err as { stdout?: string }).stdout;
    if (out) return out;
    throw err;
  }
}

const spectral = (ruleset: string) =>
  JSON.parse(run(bin("spectral"), ["lint", "-q", "-f", "json", "-r", join(here, ruleset), doc])) as {
    code: string;
    path: string[];
  }[];

const count = (codes: string[]) =>
  Object.entries(Object.groupBy(codes, (c) => c)).map(([code, list]) => `${code} ×${list?.length}`);
const failures: string[] = [];

const redocly = JSON.parse(run(bin("redocly"), ["lint", "--config", join(here, "redocly.yaml"), "--format", "json", doc])) as {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string }[];
};
console.log(`redocly recommended: ${redocly.totals.errors} errors, ${redocly.totals.warnings} warnings`);
if (redocly.totals.errors + redocly.totals.warnings > 0)
  failures.push(`redocly: ${count(redocly.problems.map((p) => p.ruleId))}`);

const oas = spectral(".spectral.yaml");
console.log(`spectral:oas: ${oas.length} findings`);
if (oas.length > 0) failures.push(`spectral:oas: ${count(oas.map((r) => r.code))}`);

const owasp = spectral("owasp.spectral.yaml");
const listed = new Set(readFileSync(join(here, "FINDINGS.md"), "utf8").match(/owasp:[\w:.-]+/g) ?? []);
console.log(`spectral owasp: ${owasp.length} findings: ${count(owasp.map((r) => r.code)).join(", ")}`);
const unlisted = owasp.filter((r) => !listed.has(r.code));
if (unlisted.length > 0) {
  failures.push(`owasp findings FINDINGS.md does not explain: ${count(unlisted.map((r) => r.code))}`);
}
const rateLimit = owasp.filter((r) => /rate-limit/.test(r.code));
if (rateLimit.length > 0) failures.push(`owasp rate-limit findings: ${rateLimit.map((r) => r.path.join(".")).join(", ")}`);

for (const failure of failures) console.error(`FAIL ${failure}`);
process.exit(failures.length > 0 ? 1 : 0);
