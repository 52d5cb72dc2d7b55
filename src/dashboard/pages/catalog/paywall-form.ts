/**
 * The paywall form's values and bodies, read back into the API's request bodies and validated by the API's own
 * schemas. What is the page's own: the price typed in USDC (converted to micro-units digit by digit, `parseUsdc`), the
 * timeout in seconds, the cache rules and JSON schemas as text, and the API's words put in the form's units.
 */
import type { z } from "zod";
import type { PaywallCreate, PaywallUpdate } from "../../../core/catalog/paywalls.ts";
import { formatUsdc, parseUsdc } from "../../../core/money/usdc.ts";
import type { PaywallRow } from "../../../db/schema.ts";
import type { CACHE_RULE_KEYS } from "../../../lib/cache-rules.ts";
import { addError, type FormErrors, type FormReader, formErrorsOf, linesOf, noErrors } from "../../forms.tsx";
import { type Parsed, parsedWith } from "./parse.ts";

export const PAYWALL_LABELS: Record<string, string> = {
  slug: "Slug",
  name: "Name",
  price: "Price (USDC)",
  description: "Description",
  networks: "Networks",
  allowedMethods: "Methods",
  targetType: "Target",
  targetRoute: "Route",
  targetUrl: "Upstream URL",
  serviceId: "Service",
  fulfillmentMode: "Fulfilment",
  timeout: "Upstream timeout (seconds)",
  cacheTtlSeconds: "Cache answers for (seconds)",
  cacheVaryQuery: "Vary on query parameters",
  cacheVaryHeaders: "Vary on headers",
  cacheVaryBody: "Vary on the body",
  cacheStatuses: "Cached statuses",
  inputSchema: "Input schema (JSON)",
  outputSchema: "Output schema (JSON)",
  sessionsEnabled: "Sessions",
  sessionsMinDeposit: "Minimum deposit (USDC)",
};

/** The form field of each `cacheRules` key. */
const CACHE_FIELDS = {
  ttlSeconds: "cacheTtlSeconds",
  varyQuery: "cacheVaryQuery",
  varyHeaders: "cacheVaryHeaders",
  varyBody: "cacheVaryBody",
  statuses: "cacheStatuses",
} as const satisfies Record<(typeof CACHE_RULE_KEYS)[number], string>;

export const paywallFieldId = (field: string) => `pw-${field}`;

export function paywallFieldOf(path: string): string | null {
  const [head = "", sub = ""] = path.split(".");
  if (head === "network") return "networks";
  if (head === "cacheRules") return CACHE_FIELDS[sub as keyof typeof CACHE_FIELDS] ?? "cacheTtlSeconds";
  // An example that does not satisfy the schema is the schema field's problem (the form has no example field).
  if (head === "outputExample") return "outputSchema";
  if (head === "sessions") return sub === "minDeposit" ? "sessionsMinDeposit" : "sessionsEnabled";
  return head in PAYWALL_LABELS ? head : null;
}

export interface PaywallFormValues {
  slug: string;
  name: string;
  price: string;
  description: string;
  networks: string[];
  allowedMethods: string[];
  targetType: string;
  targetRoute: string;
  targetUrl: string;
  serviceId: string;
  fulfillmentMode: string;
  timeout: string;
  enabled: boolean;
  cacheTtlSeconds: string;
  cacheVaryQuery: string;
  cacheVaryHeaders: string;
  cacheVaryBody: boolean;
  cacheStatuses: string;
  inputSchema: string;
  outputSchema: string;
  sessionsEnabled: boolean;
  sessionsMinDeposit: string;
}

const NO_CACHE_RULES = {
  cacheTtlSeconds: "",
  cacheVaryQuery: "",
  cacheVaryHeaders: "",
  cacheVaryBody: true,
  cacheStatuses: "",
};

/** Stored cache rules as the form shows them (lists comma-separated); keys the form has no field for stay stored. */
function cacheValuesOf(rules: Record<string, unknown> | null) {
  if (!rules) return NO_CACHE_RULES;
  const list = (v: unknown) => (Array.isArray(v) ? v.join(", ") : v === undefined ? "" : JSON.stringify(v));
  return {
    cacheTtlSeconds: rules.ttlSeconds === undefined ? "" : String(rules.ttlSeconds),
    cacheVaryQuery: list(rules.varyQuery),
    cacheVaryHeaders: list(rules.varyHeaders),
    cacheVaryBody: rules.varyBody !== false,
    cacheStatuses: list(rules.statuses),
  };
}

const jsonText = (value: unknown) => (value ? JSON.stringify(value, null, 2) : "");

/**
 * A new paywall's form: for a service (from its page, or `?service=`), a route of it on every network it accepts;
 * without one, an upstream URL on a testnet network.
 */
export const emptyPaywall = (service?: { id: string; networks: string[] }): PaywallFormValues => ({
  slug: "",
  name: "",
  price: "",
  description: "",
  networks: service ? [...service.networks] : ["base-sepolia"],
  allowedMethods: ["GET"],
  targetType: service ? "ROUTE" : "PROXY",
  targetRoute: "",
  targetUrl: "",
  serviceId: service?.id ?? "",
  fulfillmentMode: "PROXY",
  timeout: "60",
  enabled: true,
  ...NO_CACHE_RULES,
  inputSchema: "",
  outputSchema: "",
  sessionsEnabled: false,
  sessionsMinDeposit: "",
});

/** Micro-USDC as the form shows it: USDC without trailing zeros (`10000` → `0.01`). */
const usdcText = (micro: string) => formatUsdc(micro).replace(/\.?0+$/, "");

export const paywallValuesOf = (p: PaywallRow): PaywallFormValues => ({
  slug: p.slug,
  name: p.name,
  price: usdcText(p.price),
  description: p.description ?? "",
  networks: p.networks,
  allowedMethods: p.allowedMethods,
  targetType: p.targetType,
  targetRoute: p.targetRoute ?? "",
  targetUrl: p.targetUrl ?? "",
  serviceId: p.serviceId ?? "",
  fulfillmentMode: p.fulfillmentMode,
  timeout: String(p.timeout / 1000),
  enabled: p.enabled,
  ...cacheValuesOf(p.cacheRules),
  inputSchema: jsonText(p.inputSchema),
  outputSchema: jsonText(p.outputSchema),
  sessionsEnabled: p.sessionsEnabled,
  sessionsMinDeposit: p.sessionsMinDeposit === null ? "" : usdcText(p.sessionsMinDeposit),
});

const typedPaywall = (form: FormReader, slug?: string): PaywallFormValues => ({
  slug: slug ?? form.one("slug"),
  name: form.one("name"),
  price: form.one("price"),
  description: form.one("description"),
  networks: form.many("networks"),
  allowedMethods: form.many("allowedMethods"),
  targetType: form.one("targetType"),
  targetRoute: form.one("targetRoute"),
  targetUrl: form.one("targetUrl"),
  serviceId: form.one("serviceId"),
  fulfillmentMode: form.one("fulfillmentMode"),
  timeout: form.one("timeout"),
  enabled: form.has("enabled"),
  cacheTtlSeconds: form.one("cacheTtlSeconds"),
  cacheVaryQuery: form.one("cacheVaryQuery"),
  cacheVaryHeaders: form.one("cacheVaryHeaders"),
  // Unticked sends nothing: the form says whether it carried the box (a form without the cache fields keeps `true`).
  cacheVaryBody: form.has("cacheVaryBody") || !form.has("cacheTtlSeconds"),
  cacheStatuses: form.one("cacheStatuses"),
  inputSchema: form.one("inputSchema"),
  outputSchema: form.one("outputSchema"),
  sessionsEnabled: form.has("sessionsEnabled"),
  sessionsMinDeposit: form.one("sessionsMinDeposit"),
});

const PRICE_WORDS = "Must be a decimal amount from 0.000001 to 1,000,000,000 with at most 6 decimals, e.g. 0.01";

/** The price typed in USDC as the API's micro-units (or a marker the price rule refuses). */
const priceOf = (form: FormReader) => parseUsdc(form.one("price")) ?? "invalid";

/**
 * The sessions setting as the API's object: the minimum deposit typed in USDC as micro-units, the same way as the
 * price (empty: none, the price is the minimum).
 */
const sessionsOf = (form: FormReader) => {
  const deposit = form.one("sessionsMinDeposit").trim();
  return {
    enabled: form.has("sessionsEnabled"),
    ...(deposit === "" ? {} : { minDeposit: parseUsdc(deposit) ?? "invalid" }),
  };
};

const DEPOSIT_WORDS = "Must be a decimal amount from 0.000001 to 1,000,000 with at most 6 decimals, e.g. 1";

/** Seconds as the API's milliseconds: whole seconds only (digits, no float). */
const timeoutOf = (form: FormReader) => {
  const s = form.one("timeout").trim();
  return /^\d{1,7}$/.test(s) ? Number(`${s}000`) : s === "" ? undefined : Number.NaN;
};

/** A whole number typed in a field as a number, or the text as typed (the API's rule then names the field). */
const wholeNumber = (text: string): number | string => (/^\d{1,9}$/.test(text) ? Number(text) : text);

/**
 * The cache rules of the form (`null`: none), on top of `kept`, the stored keys the form has no field for. Only what
 * differs from the gateway's defaults is written (a list when one is typed, `varyBody` when unticked), and nothing
 * without a time to keep answers: the other rules do nothing without it.
 */
function cacheRulesFrom(form: FormReader, kept: Record<string, unknown> | null): Record<string, unknown> | null {
  const rules: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(kept ?? {})) if (!(key in CACHE_FIELDS)) rules[key] = value;
  const ttl = form.one("cacheTtlSeconds").trim();
  const varyQuery = linesOf(form.one("cacheVaryQuery"));
  const varyHeaders = linesOf(form.one("cacheVaryHeaders"));
  const statuses = linesOf(form.one("cacheStatuses"));
  if (ttl !== "" || varyQuery.length > 0 || varyHeaders.length > 0 || statuses.length > 0) {
    if (ttl !== "") rules.ttlSeconds = wholeNumber(ttl);
    if (varyQuery.length > 0) rules.varyQuery = varyQuery;
    if (varyHeaders.length > 0) rules.varyHeaders = varyHeaders;
    if (!form.has("cacheVaryBody")) rules.varyBody = false;
    if (statuses.length > 0) rules.statuses = statuses.map(wholeNumber);
  }
  return Object.keys(rules).length > 0 ? rules : null;
}

/** A JSON Schema typed in a textarea: `null` when empty, the parsed value, or the parse error for its field. */
function schemaFrom(form: FormReader, name: "inputSchema" | "outputSchema", errors: FormErrors): unknown {
  const text = form.one(name).trim();
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    addError(errors, name, 'Not valid JSON: write a JSON Schema object, e.g. {"type": "object", "properties": {}}');
    return null;
  }
}

/** Parse errors of the JSON fields first, then the API's rules on the rest. */
function withJsonErrors<T>(parsed: Parsed<T>, jsonErrors: FormErrors): Parsed<T> {
  if (jsonErrors.fields.size === 0) return parsed;
  const errors = parsed.errors ?? noErrors();
  for (const [field, messages] of errors.fields) if (!jsonErrors.fields.has(field)) jsonErrors.fields.set(field, messages);
  jsonErrors.general.push(...errors.general);
  return { errors: jsonErrors };
}

/** The API's words for a price or timeout are about micro-units and milliseconds; the form's are about USDC and seconds. */
function inFormUnits(errors: FormErrors): FormErrors {
  if (errors.fields.has("price")) errors.fields.set("price", [PRICE_WORDS]);
  if (errors.fields.has("timeout")) errors.fields.set("timeout", ["Must be whole seconds from 30 to 3600"]);
  const deposit = errors.fields.get("sessionsMinDeposit");
  if (deposit) {
    const belowPrice = deposit.some((m) => m.includes("at least the price"));
    errors.fields.set("sessionsMinDeposit", [belowPrice ? "Must be at least the price" : DEPOSIT_WORDS]);
  }
  return errors;
}

/** The route a new paywall's slug names (`/forecast`), when the slug is one. */
const slugRoute = (slug: string) => (/^[a-z0-9._-]+$/.test(slug) ? `/${slug}` : undefined);

export function paywallCreateFrom(form: FormReader, schema: z.ZodType<PaywallCreate>) {
  const jsonErrors = noErrors();
  const target = form.one("targetType");
  const body = {
    slug: form.one("slug").trim(),
    name: form.one("name"),
    targetType: target,
    price: priceOf(form),
    currency: "USDC",
    fulfillmentMode: form.one("fulfillmentMode"),
    networks: form.many("networks"),
    allowedMethods: form.many("allowedMethods"),
    description: form.one("description").trim() || undefined,
    // A route left empty is the slug's path on the service: `/forecast`.
    targetRoute: target === "ROUTE" ? form.one("targetRoute").trim() || slugRoute(form.one("slug").trim()) : undefined,
    targetUrl: target === "PROXY" ? form.one("targetUrl").trim() || undefined : undefined,
    serviceId: form.one("serviceId") || undefined,
    timeout: timeoutOf(form),
    enabled: form.has("enabled"),
    sessions: sessionsOf(form),
    cacheRules: cacheRulesFrom(form, null) ?? undefined,
    inputSchema: schemaFrom(form, "inputSchema", jsonErrors) ?? undefined,
    outputSchema: schemaFrom(form, "outputSchema", jsonErrors) ?? undefined,
  };
  const parsed = withJsonErrors(parsedWith(schema, body, paywallFieldOf), jsonErrors);
  if (parsed.errors) inFormUnits(parsed.errors);
  return { parsed, values: typedPaywall(form) };
}

export function paywallUpdateFrom(form: FormReader, schema: z.ZodType<PaywallUpdate>, stored: PaywallRow) {
  const jsonErrors = noErrors();
  const target = form.one("targetType");
  const body = {
    name: form.one("name"),
    targetType: target,
    price: priceOf(form),
    fulfillmentMode: form.one("fulfillmentMode") || undefined,
    networks: form.many("networks"),
    allowedMethods: form.many("allowedMethods"),
    description: form.one("description").trim() || null,
    targetRoute: target === "ROUTE" ? form.one("targetRoute").trim() || null : null,
    targetUrl: target === "PROXY" ? form.one("targetUrl").trim() || null : null,
    serviceId: form.one("serviceId") || null,
    timeout: timeoutOf(form),
    sessions: sessionsOf(form),
    cacheRules: cacheRulesFrom(form, stored.cacheRules),
    inputSchema: schemaFrom(form, "inputSchema", jsonErrors),
    outputSchema: schemaFrom(form, "outputSchema", jsonErrors),
  };
  // The API's update schema has no fulfilment mode: it is set at creation.
  delete (body as { fulfillmentMode?: string }).fulfillmentMode;
  const parsed = withJsonErrors(parsedWith(schema, body, paywallFieldOf), jsonErrors);
  if (parsed.errors) inFormUnits(parsed.errors);
  return { parsed, values: typedPaywall(form, stored.slug) };
}

export const paywallErrorsOf = (err: unknown) => {
  const errors = formErrorsOf(err, paywallFieldOf, { CONFLICT: "slug" });
  return errors && inFormUnits(errors);
};
