import type { OpenAPIHono } from "@hono/zod-openapi";

type OpenAPIObject = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

const esc = (value: unknown) => String(value ?? "").replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const code = (value: unknown) => `<pre><code>${esc(JSON.stringify(value, null, 2))}</code></pre>`;

type Json = Record<string, unknown>;

/** Resolves `#/components/schemas/X` references so the page shows whole shapes. */
function resolve(doc: OpenAPIObject, schema: unknown, depth = 0): unknown {
  if (depth > 12 || schema === null || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((s) => resolve(doc, s, depth + 1));
  const ref = (schema as Json).$ref;
  if (typeof ref === "string") {
    const name = ref.split("/").pop() ?? "";
    return resolve(doc, doc.components?.schemas?.[name], depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolve(doc, v, depth + 1)]));
}

function operationHtml(doc: OpenAPIObject, method: string, path: string, op: Json): string {
  const id = `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-");
  const params = (op.parameters as Json[] | undefined) ?? [];
  const body = (op.requestBody as Json | undefined)?.content as Json | undefined;
  const bodySchema = (body?.["application/json"] as Json | undefined)?.schema;
  const responses = Object.entries((op.responses as Json) ?? {});
  return `<section id="${esc(id)}">
<h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p><strong>${esc(op.summary)}</strong></p>
${op.description ? `<p>${esc(op.description)}</p>` : ""}
${
  params.length
    ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${params
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? "yes" : "no"}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`,
        )
        .join("")}</table>`
    : ""
}
${bodySchema ? `<h4>Request body</h4>${code(resolve(doc, bodySchema))}` : ""}
<h4>Responses</h4>
${responses
  .map(([status, r]) => {
    const schema = (((r as Json).content as Json | undefined)?.["application/json"] as Json | undefined)?.schema;
    return `<details><summary><code>${esc(status)}</code> ${esc((r as Json).description)}</summary>${schema ? code(resolve(doc, schema)) : ""}</details>`;
  })
  .join("\n")}
</section>`;
}

/** A self-contained API reference rendered from the OpenAPI document (no scripts, no external assets). */
export function docsPage(doc: OpenAPIObject): string {
  const ops = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, op]) => ({ path, method, op: op as Json })),
  );
  const nav = ops
    .map(
      ({ method, path }) =>
        `<li><a href="#${esc(`${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-"))}">${esc(method.toUpperCase())} ${esc(path)}</a></li>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} — API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1a1a1a}
nav{width:280px;padding:1rem;border-right:1px solid #ddd;height:100vh;overflow:auto;position:sticky;top:0}
main{flex:1;padding:1rem 2rem;max-width:960px}
section{border-bottom:1px solid #eee;padding-bottom:1rem}
pre{background:#f6f8fa;padding:.75rem;overflow:auto;font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}
.m{font-size:12px;padding:2px 6px;border-radius:4px;color:#fff;background:#555}
.get{background:#1f7a3a}.post{background:#1c5fb8}.patch{background:#a86b00}.delete{background:#b3261e}
nav ul{list-style:none;padding:0}nav a{text-decoration:none;font-family:monospace;font-size:13px}
</style></head>
<body><nav><h2>${esc(doc.info.title)}</h2><p>v${esc(doc.info.version)} · <a href="/openapi.json">openapi.json</a></p><ul>${nav}</ul></nav>
<main><h1>${esc(doc.info.title)}</h1><p>${esc(doc.info.description)}</p>
${ops.map(({ method, path, op }) => operationHtml(doc, method, path, op)).join("\n")}
</main></body></html>`;
}
