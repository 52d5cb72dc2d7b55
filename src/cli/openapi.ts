/**
 * Writes the OpenAPI document the Worker serves at `/openapi.json` to `dist/openapi.json` (or the path given), for the
 * linters and other offline tools. Runs the app in Node: `/openapi.json` reads no binding.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createApi } from "../api/app.ts";

const out = resolve(process.argv[2] ?? "dist/openapi.json");
console.log = console.error; // the request's access-log line goes to stderr; stdout stays empty
const res = await createApi().request("/openapi.json", {}, {} as Env);
if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(await res.json(), null, 2)}\n`);
console.error(`wrote ${out}`);
