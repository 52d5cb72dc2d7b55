// The API reference: renders the operations of /openapi.json (same origin, nothing from elsewhere) into docs.html.
// Markdown in descriptions is rendered, schemas become field tables, and every operation gets request and
// response examples and a curl sample built from its schemas.

const METHODS = ["get", "post", "put", "patch", "delete"];

const escapeHtml = (text) =>
  String(text ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);

/** Inline Markdown: `code`, **bold**, *emphasis*, [links](https://…). Everything else is escaped text. */
function inline(text) {
  const parts = String(text ?? "").split(/(`[^`]+`)/);
  return parts
    .map((part) => {
      if (/^`[^`]+`$/.test(part)) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      return escapeHtml(part)
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
        .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>")
        .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/|#)[^)\s]*)\)/g, '<a href="$2">$1</a>');
    })
    .join("");
}

/** Block Markdown: paragraphs and "- " lists, with inline formatting. */
export function markdown(text) {
  return String(text ?? "")
    .trim()
    .split(/\n\s*\n/)
    .filter(Boolean)
    .map((block) => {
      const lines = block.split("\n");
      if (lines.every((line) => /^\s*[-*] /.test(line))) {
        return `<ul>${lines.map((line) => `<li>${inline(line.replace(/^\s*[-*] /, ""))}</li>`).join("")}</ul>`;
      }
      return `<p>${inline(lines.join(" "))}</p>`;
    })
    .join("");
}

/** Follows `$ref`s into `components.schemas` (cycles stop after a few levels). */
function deref(doc, schema, depth = 0) {
  if (!schema || typeof schema !== "object" || depth > 20) return schema ?? {};
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop();
    return deref(doc, { ...doc.components?.schemas?.[name], ...withoutRef(schema) }, depth + 1);
  }
  return schema;
}
const withoutRef = ({ $ref, ...rest }) => rest;

/** The variants of a union (`oneOf`/`anyOf`), without a bare `null`. */
const variantsOf = (doc, schema) =>
  (schema.oneOf ?? schema.anyOf ?? []).map((s) => deref(doc, s)).filter((s) => s.type !== "null");
const isNullable = (doc, schema) =>
  (Array.isArray(schema.type) && schema.type.includes("null")) ||
  (schema.oneOf ?? schema.anyOf ?? []).some((s) => deref(doc, s).type === "null") ||
  schema.nullable === true;
const typeOf = (schema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type);

/** A short human label for a schema's type: `string (uri)`, `array of string`, `integer`, `one of 3 shapes`. */
function typeLabel(doc, schema) {
  schema = deref(doc, schema);
  const variants = variantsOf(doc, schema);
  if (variants.length === 1) return typeLabel(doc, { ...variants[0], description: schema.description });
  if (variants.length > 1) return `one of ${variants.length} shapes`;
  const type = typeOf(schema);
  if (type === "array") return `array of ${typeLabel(doc, schema.items ?? {})}`;
  if (schema.const !== undefined) return "constant";
  if (type === "object" && !schema.properties && schema.additionalProperties) return "object (any keys)";
  return `${type ?? "any"}${schema.format ? ` (${schema.format})` : ""}`;
}

/** Constraints worth reading, as short phrases. */
function constraints(doc, schema) {
  schema = deref(doc, schema);
  const out = [];
  const variants = variantsOf(doc, schema);
  if (variants.length === 1) return constraints(doc, variants[0]);
  if (schema.enum) out.push(`one of ${schema.enum.map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(", ")}`);
  if (schema.const !== undefined) out.push(`always <code>${escapeHtml(JSON.stringify(schema.const))}</code>`);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    out.push(`${schema.minLength ?? 0}–${schema.maxLength ?? "∞"} characters`);
  }
  if (schema.minimum !== undefined || schema.maximum !== undefined)
    out.push(`${schema.minimum ?? "−∞"}–${schema.maximum ?? "∞"}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined)
    out.push(`${schema.minItems ?? 0}–${schema.maxItems ?? "∞"} items`);
  if (schema.uniqueItems) out.push("no repeats");
  if (schema.pattern) out.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.default !== undefined) out.push(`default <code>${escapeHtml(JSON.stringify(schema.default))}</code>`);
  const items = schema.items && deref(doc, schema.items);
  if (items?.enum) out.push(`items: ${items.enum.map((v) => `<code>${escapeHtml(String(v))}</code>`).join(", ")}`);
  return out;
}

/** Rows of a field table: one per property, nested objects indented under their parent. */
function fieldRows(doc, schema, prefix = "", depth = 0) {
  schema = deref(doc, schema);
  const variants = variantsOf(doc, schema);
  if (variants.length === 1) return fieldRows(doc, variants[0], prefix, depth);
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  return Object.entries(props).flatMap(([name, raw]) => {
    const field = deref(doc, raw);
    const path = `${prefix}${name}`;
    const notes = [
      ...(required.has(name) ? ['<span class="req">required</span>'] : []),
      ...(isNullable(doc, field) ? ['<span class="tag">nullable</span>'] : []),
      ...(field.readOnly ? ['<span class="tag">read-only</span>'] : []),
    ];
    const desc = [markdown(field.description), constraints(doc, field).join(" · ")].filter(Boolean).join("");
    const row = `<tr><td class="field d${Math.min(depth, 4)}"><code>${escapeHtml(name)}</code> ${notes.join(" ")}</td><td class="type">${escapeHtml(typeLabel(doc, field))}</td><td class="desc">${desc}</td></tr>`;
    const inner = deref(doc, variantsOf(doc, field).length === 1 ? variantsOf(doc, field)[0] : field);
    const many = variantsOf(doc, inner);
    if (depth < 4 && typeOf(inner) === "object" && inner.properties)
      return [row, ...fieldRows(doc, inner, `${path}.`, depth + 1)];
    if (depth < 4 && typeOf(inner) === "array") {
      const items = deref(doc, inner.items ?? {});
      if (typeOf(items) === "object" && items.properties) return [row, ...fieldRows(doc, items, `${path}[].`, depth + 1)];
    }
    if (many.length > 1) {
      return [row, `<tr><td colspan="3" class="variants">${variantTabs(doc, many)}</td></tr>`];
    }
    return [row];
  });
}

/** Each shape of a union, titled by its distinguishing constant when it has one. */
function variantTabs(doc, variants) {
  return variants
    .map((variant, i) => {
      const constant = Object.entries(variant.properties ?? {}).find(
        ([, p]) => deref(doc, p).enum?.length === 1 || deref(doc, p).const !== undefined,
      );
      const title = constant
        ? `${constant[0]}: ${JSON.stringify(deref(doc, constant[1]).const ?? deref(doc, constant[1]).enum[0])}`
        : (variant.title ?? `shape ${i + 1}`);
      const rows = fieldRows(doc, variant, "", 0);
      return `<details class="variant"><summary>${escapeHtml(title)}</summary>${rows.length ? fieldTable(rows) : `<p class="muted">${escapeHtml(typeLabel(doc, variant))}</p>`}</details>`;
    })
    .join("");
}

const fieldTable = (rows) =>
  `<div class="scroll"><table class="fields"><thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;

/** A readable schema: a field table for objects, a line for anything else. */
function schemaView(doc, schema) {
  const resolved = deref(doc, schema);
  const many = variantsOf(doc, resolved);
  if (many.length > 1) return `<p>One of these shapes:</p>${variantTabs(doc, many)}`;
  const rows = fieldRows(doc, resolved);
  if (rows.length) return fieldTable(rows);
  return `<p class="muted">${escapeHtml(typeLabel(doc, resolved))}</p>`;
}

const SAMPLE_STRINGS = {
  "date-time": "2026-11-22T10:00:00.000Z",
  date: "2026-11-22",
  uri: "https://api.example.com",
  url: "https://api.example.com",
  email: "ops@example.com",
  uuid: "3d9c1e7a-52b0-4f6e-9c1e-7a52b04f6e3d",
};

/** A plausible example value for a schema: its example, default or first enum value, else one built from its type. */
export function example(doc, schema, name = "", depth = 0) {
  schema = deref(doc, schema);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined && typeOf(schema) !== "object") return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  const variants = variantsOf(doc, schema);
  if (variants.length) return example(doc, variants[0], name, depth);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s) => example(doc, s, name, depth)));
  if (depth > 6) return null;
  switch (typeOf(schema)) {
    case "object": {
      if (!schema.properties) return {};
      return Object.fromEntries(Object.entries(schema.properties).map(([key, s]) => [key, example(doc, s, key, depth + 1)]));
    }
    case "array":
      return [example(doc, schema.items ?? {}, name, depth + 1)];
    case "integer":
    case "number":
      return schema.minimum !== undefined && schema.minimum > 0 ? schema.minimum : 1;
    case "boolean":
      return true;
    case "string":
      if (SAMPLE_STRINGS[schema.format]) return SAMPLE_STRINGS[schema.format];
      if (/wallet|address/i.test(name)) return "0x52908400098527886E0F7030069857D2E4169EE7";
      if (/url$|homepage|reference|llms/i.test(name)) return "https://api.example.com/docs";
      if (/email/i.test(name)) return SAMPLE_STRINGS.email;
      if (/route/i.test(name)) return "/v1/forecast";
      if (/(At|time)$/.test(name)) return SAMPLE_STRINGS["date-time"];
      if (/^id$/i.test(name)) return "id_3d9c1e7a52b04f6e";
      if (/Id$/.test(name)) return `${name.slice(0, 3).toLowerCase()}_3d9c1e7a52b04f6e`;
      return name ? `${name}` : "string";
    default:
      return null;
  }
}

const pretty = (value) => JSON.stringify(value, null, 2);

/** A curl command for an operation, using $API and $KEY and the schema-built example body. */
export function curlSample(doc, method, path, op) {
  const url = path.replace(/\{([^}]+)\}/g, (_, name) => `$${name.toUpperCase()}`);
  const query = (op.parameters ?? [])
    .filter((p) => p.in === "query" && (p.required || p.name === "limit"))
    .map((p) => `${p.name}=${encodeURIComponent(String(example(doc, p.schema ?? {}, p.name)))}`);
  const lines = [
    `curl -s${method === "get" ? "" : ` -X ${method.toUpperCase()}`} "$API${url}${query.length ? `?${query.join("&")}` : ""}"`,
  ];
  const secured = (op.security ?? doc.security ?? []).some((s) => Object.keys(s).length > 0);
  if (secured) lines.push(`-H "Authorization: Bearer $KEY"`);
  const body = op.requestBody?.content?.["application/json"]?.schema;
  if (body) {
    lines.push(`-H "Content-Type: application/json"`);
    lines.push(`-d '${pretty(example(doc, body)).replace(/'/g, "'\\''")}'`);
  }
  return lines.join(" \\\n  ");
}

const codeBlock = (text, label) =>
  `<div class="codebox"><div class="codebar"><span>${escapeHtml(label)}</span><button type="button" class="copy">Copy</button></div><pre class="code"><code>${escapeHtml(text)}</code></pre></div>`;

const scopeOf = (op) => op["x-scope"] ?? /Scope: `([a-z]+:[a-z]+)`/.exec(op.description ?? "")?.[1];

const anchor = (method, path) => `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-").replace(/-$/, "");

function parametersView(doc, params) {
  if (!params.length) return "";
  const rows = params.map((p) => {
    const schema = deref(doc, p.schema ?? {});
    const notes = p.required ? ' <span class="req">required</span>' : "";
    const desc = [markdown(p.description ?? schema.description), constraints(doc, schema).join(" · ")].filter(Boolean).join("");
    return `<tr><td class="field"><code>${escapeHtml(p.name)}</code>${notes}</td><td class="type">${escapeHtml(p.in)} · ${escapeHtml(typeLabel(doc, schema))}</td><td class="desc">${desc}</td></tr>`;
  });
  return `<h4>Parameters</h4><div class="scroll"><table class="fields"><thead><tr><th>Name</th><th>In · type</th><th>Description</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function responsesView(doc, op) {
  return Object.entries(op.responses ?? {})
    .map(([status, raw]) => {
      const response = deref(doc, raw);
      const schema = response.content?.["application/json"]?.schema;
      const ok = status.startsWith("2");
      const headers = Object.keys(response.headers ?? {});
      const body = schema
        ? ok
          ? `${codeBlock(pretty(example(doc, schema)), "Example response")}<details class="schema"><summary>Response fields</summary>${schemaView(doc, schema)}</details>`
          : ""
        : "";
      return `<div class="response ${ok ? "ok" : "err"}"><div class="status"><span class="st s${status[0]}">${escapeHtml(status)}</span> ${inline(response.description)}${
        headers.length
          ? `<span class="muted"> · headers: ${headers.map((h) => `<code>${escapeHtml(h)}</code>`).join(", ")}</span>`
          : ""
      }</div>${body}</div>`;
    })
    .join("");
}

function operationView(doc, method, path, op) {
  const scope = scopeOf(op);
  const secured = (op.security ?? doc.security ?? []).some((s) => Object.keys(s).length > 0);
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const params = (op.parameters ?? []).map((p) => deref(doc, p));
  return `<section class="operation" id="${anchor(method, path)}">
  <h3><span class="method ${method}">${method.toUpperCase()}</span> <span class="path">${escapeHtml(path)}</span></h3>
  <p class="summary">${inline(op.summary)}</p>
  <p class="badges">${secured ? `<span class="badge key">API key</span>` : `<span class="badge open">No key needed</span>`}${scope ? ` <span class="badge scope">scope <code>${escapeHtml(scope)}</code></span>` : ""}${op.operationId ? ` <span class="badge id">${escapeHtml(op.operationId)}</span>` : ""}</p>
  <div class="prose">${markdown(op.description)}</div>
  <div class="columns">
    <div class="spec">
      ${parametersView(doc, params)}
      ${body ? `<h4>Request body</h4>${schemaView(doc, body)}` : ""}
      <h4>Responses</h4>${responsesView(doc, op)}
    </div>
    <div class="samples">
      ${codeBlock(curlSample(doc, method, path, op), "curl")}
      ${body ? codeBlock(pretty(example(doc, body)), "Example request body") : ""}
    </div>
  </div>
</section>`;
}

/** Operations grouped by their first tag, in document order. */
function groups(doc) {
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "Other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push({ method, path, op });
    }
  }
  const described = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
  return [...byTag].map(([tag, ops]) => ({ tag, description: described.get(tag), ops }));
}

export function render(doc) {
  document.getElementById("version").textContent = `v${doc.info?.version ?? ""}`;
  document.getElementById("origin").textContent = location.origin;
  const grouped = groups(doc);
  document.getElementById("nav-operations").innerHTML = grouped
    .map(
      ({ tag, ops }) =>
        `<h5>${escapeHtml(tag)}</h5><ul>${ops
          .map(
            ({ method, path, op }) =>
              `<li><a href="#${anchor(method, path)}"><span class="method ${method}">${method.toUpperCase()}</span> ${escapeHtml(op.summary ?? path)}</a></li>`,
          )
          .join("")}</ul>`,
    )
    .join("");
  document.getElementById("operations").innerHTML = grouped
    .map(
      ({ tag, description, ops }) =>
        `<section class="group" id="tag-${anchor("", tag)}"><h2>${escapeHtml(tag)}</h2>${description ? `<div class="prose">${markdown(description)}</div>` : ""}${ops
          .map(({ method, path, op }) => operationView(doc, method, path, op))
          .join("")}</section>`,
    )
    .join("");
  markScrollable();
  document.body.dataset.ready = "true";
  if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
}

/**
 * A code block or table wider than its box scrolls sideways: it then takes keyboard focus (arrow keys scroll it) and
 * is named after what it holds, its code box's label or its table's heading. One that fits takes no tab stop. Checked
 * again when the window's width changes.
 */
export function markScrollable() {
  for (const el of document.querySelectorAll("pre.code, .scroll")) {
    if (el.scrollWidth > el.clientWidth) {
      const named =
        el.closest(".codebox")?.querySelector(".codebar span")?.textContent ||
        el.previousElementSibling?.textContent ||
        (el.matches("pre") ? "Code" : "Table");
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "group");
      el.setAttribute("aria-label", `${named.trim()} (scrolls sideways)`);
    } else {
      for (const name of ["tabindex", "role", "aria-label"]) el.removeAttribute(name);
    }
  }
}

function wireCopyButtons() {
  document.addEventListener("click", async (event) => {
    const button = event.target.closest?.("button.copy");
    if (!button) return;
    const text = button.closest(".codebox").querySelector("code").textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => {
      button.textContent = "Copy";
    }, 1500);
  });
}

async function main() {
  wireCopyButtons();
  let pending = 0;
  addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(markScrollable);
  });
  if (matchMedia("(max-width: 900px)").matches) document.getElementById("nav-details").open = false;
  try {
    const res = await fetch("/openapi.json", { headers: { accept: "application/json" } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    render(await res.json());
  } catch (err) {
    document.getElementById("operations").innerHTML =
      `<p class="error">Could not load <a href="/openapi.json">/openapi.json</a>: ${escapeHtml(err.message)}</p>`;
    document.body.dataset.ready = "error";
  }
}

main();
