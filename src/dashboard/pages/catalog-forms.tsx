/**
 * The service and paywall forms: fields in the API's shapes, read back into the API's request bodies and validated by
 * the API's own schemas and commands (src/core/catalog/), so the dashboard applies exactly the API's rules. What is
 * the page's own: labels, the price typed in USDC (converted to micro-units digit by digit, `parseUsdc`), the timeout in
 * seconds, write-only secret fields (left empty on an edit, a stored secret is kept: the API's `***`), and mapping each
 * refusal to its field.
 */
import type { z } from "zod";
import { HTTP_METHODS, type PaywallCreate, type PaywallUpdate } from "../../core/catalog/paywalls.ts";
import type { ServiceCreate, ServiceUpdate } from "../../core/catalog/services.ts";
import { NETWORKS_BY_MODE } from "../../core/money/networks.ts";
import { formatUsdc, parseUsdc } from "../../core/money/usdc.ts";
import { AUTH_CONFIG_FIELDS, AUTH_METHODS, type AuthMethod, isSecretField } from "../../core/secrets/auth-config.ts";
import { MASK } from "../../core/secrets/secret-box.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import type { CACHE_RULE_KEYS } from "../../lib/cache-rules.ts";
import { issuesOf } from "../../lib/issues.ts";
import {
  addError,
  boxAttrs,
  Choices,
  Field,
  FieldGroup,
  type FormErrors,
  type FormReader,
  formErrorsOf,
  linesOf,
  noErrors,
} from "../forms.tsx";

// ---------------------------------------------------------------------------------------------------------------
// Services

/** Every credential field of any method, once, with the label people see. */
const AUTH_FIELD_LABELS: Record<string, string> = {
  bearerToken: "Bearer token",
  token: "Token",
  apiKey: "API key",
  apiSecret: "API secret",
  headerName: "Header name",
  headerValue: "Header value",
  paramName: "Query parameter name",
  paramValue: "Query parameter value",
  fieldName: "JSON field name",
  fieldValue: "JSON field value",
};
const AUTH_FIELDS = Object.keys(AUTH_FIELD_LABELS);

const methodsUsing = (field: string) =>
  AUTH_METHODS.filter((m) => [...AUTH_CONFIG_FIELDS[m].names, ...AUTH_CONFIG_FIELDS[m].secrets].includes(field));

const isSecret = (field: string) => methodsUsing(field).some((m) => isSecretField(m, field));

export const SERVICE_LABELS: Record<string, string> = {
  name: "Name",
  baseUrl: "Base URL",
  description: "Description",
  mode: "Mode",
  networks: "Networks",
  authMethod: "Upstream authentication",
  ...Object.fromEntries(AUTH_FIELDS.map((f) => [`auth.${f}`, AUTH_FIELD_LABELS[f] as string])),
  contactEmail: "Contact e-mail",
  categories: "Categories",
  docsHomepage: "Documentation homepage",
  docsApiReference: "API reference URL",
  docsLlms: "llms.txt URL",
  xGuidance: "Guidance for agents",
  publicRoutes: "Public routes",
  siwxRoutes: "Sign-in-with-wallet routes",
};

export const serviceFieldId = (field: string) => `svc-${field.replace(".", "-")}`;

/** The form field of an issue path: `networks.1` → `networks`, `authConfig.bearerToken` → `auth.bearerToken`. */
export function serviceFieldOf(path: string): string | null {
  const [head, sub] = path.split(".");
  if (head === "authConfig") return sub && AUTH_FIELDS.includes(sub) ? `auth.${sub}` : "authMethod";
  return head && head in SERVICE_LABELS ? head : null;
}

/** What the form shows: the stored service (secrets never), or what was typed. */
export interface ServiceFormValues {
  name: string;
  baseUrl: string;
  description: string;
  mode: string;
  networks: string[];
  authMethod: string;
  /** Credential names in clear; secret values are never shown again. */
  auth: Record<string, string>;
  /** Secret fields with a stored value (for the hint "stored; leave empty to keep it"). */
  storedSecrets: string[];
  contactEmail: string;
  categories: string;
  docsHomepage: string;
  docsApiReference: string;
  docsLlms: string;
  xGuidance: string;
  publicRoutes: string;
  siwxRoutes: string;
}

/** A new service starts in testnet mode on the networks of both payment standards (x402 on Base, MPP on Tempo). */
export const NEW_SERVICE_NETWORKS = ["base-sepolia", "tempo-testnet"];

export const emptyService = (): ServiceFormValues => ({
  name: "",
  baseUrl: "",
  description: "",
  mode: "testnet",
  networks: [...NEW_SERVICE_NETWORKS],
  authMethod: "none",
  auth: {},
  storedSecrets: [],
  contactEmail: "",
  categories: "",
  docsHomepage: "",
  docsApiReference: "",
  docsLlms: "",
  xGuidance: "",
  publicRoutes: "",
  siwxRoutes: "",
});

export function serviceValuesOf(s: ServiceRow): ServiceFormValues {
  const method = s.authMethod as AuthMethod;
  const spec = AUTH_CONFIG_FIELDS[method] ?? { names: [], secrets: [] };
  return {
    name: s.name,
    baseUrl: s.baseUrl,
    description: s.description ?? "",
    mode: s.mode,
    networks: s.networks,
    authMethod: s.authMethod,
    auth: Object.fromEntries(spec.names.map((n) => [n, s.authConfig[n] ?? ""])),
    storedSecrets: spec.secrets.filter((f) => s.authConfig[f] !== undefined),
    contactEmail: s.contactEmail ?? "",
    categories: s.categories.join(", "),
    docsHomepage: s.docsHomepage ?? "",
    docsApiReference: s.docsApiReference ?? "",
    docsLlms: s.docsLlms ?? "",
    xGuidance: s.xGuidance ?? "",
    publicRoutes: s.publicRoutes.join("\n"),
    siwxRoutes: s.siwxRoutes.join("\n"),
  };
}

/** The typed values (secrets dropped: they are never echoed back), keeping which secrets are stored. */
function typedService(form: FormReader, storedSecrets: string[]): ServiceFormValues {
  return {
    name: form.one("name"),
    baseUrl: form.one("baseUrl"),
    description: form.one("description"),
    mode: form.one("mode"),
    networks: form.many("networks"),
    authMethod: form.one("authMethod"),
    auth: Object.fromEntries(AUTH_FIELDS.filter((f) => !isSecret(f)).map((f) => [f, form.one(`auth.${f}`)])),
    storedSecrets,
    contactEmail: form.one("contactEmail"),
    categories: form.one("categories"),
    docsHomepage: form.one("docsHomepage"),
    docsApiReference: form.one("docsApiReference"),
    docsLlms: form.one("docsLlms"),
    xGuidance: form.one("xGuidance"),
    publicRoutes: form.one("publicRoutes"),
    siwxRoutes: form.one("siwxRoutes"),
  };
}

/** The credential fields of the chosen method, as the API takes them; an empty secret on an edit keeps the stored one. */
function authConfigOf(form: FormReader, method: string, editing: boolean): Record<string, string> {
  const spec = AUTH_CONFIG_FIELDS[method as AuthMethod];
  if (!spec) return {};
  const config: Record<string, string> = {};
  for (const f of [...spec.names, ...spec.secrets]) {
    const value = form.one(`auth.${f}`);
    if (value !== "") config[f] = value;
    else if (editing && spec.secrets.includes(f)) config[f] = MASK;
  }
  return config;
}

type Parsed<T> = { body: T; errors?: undefined } | { body?: undefined; errors: FormErrors };

function parsedWith<S extends z.ZodType>(
  schema: S,
  body: unknown,
  fieldOf: (path: string) => string | null,
): Parsed<z.output<S>> {
  const result = schema.safeParse(body);
  if (result.success) return { body: result.data };
  const errors = noErrors();
  for (const issue of issuesOf(result.error)) addError(errors, fieldOf(issue.path), issue.message);
  return { errors };
}

/** A new service's body from the form, validated by the API's schema; or the form's errors. */
export function serviceCreateFrom(form: FormReader, schema: z.ZodType<ServiceCreate>) {
  const optional = (name: string) => form.one(name).trim() || undefined;
  const body = {
    name: form.one("name"),
    baseUrl: form.one("baseUrl").trim(),
    authMethod: form.one("authMethod"),
    authConfig: authConfigOf(form, form.one("authMethod"), false),
    networks: form.many("networks"),
    mode: form.one("mode"),
    description: optional("description"),
    contactEmail: optional("contactEmail"),
    categories: linesOf(form.one("categories")),
    docsHomepage: optional("docsHomepage"),
    docsApiReference: optional("docsApiReference"),
    docsLlms: optional("docsLlms"),
    xGuidance: optional("xGuidance"),
    publicRoutes: linesOf(form.one("publicRoutes")),
    siwxRoutes: linesOf(form.one("siwxRoutes")),
  };
  return { parsed: parsedWith(schema, body, serviceFieldOf), values: typedService(form, []) };
}

/** A service update (every field, as the form shows them all) from the form, validated by the API's schema. */
export function serviceUpdateFrom(form: FormReader, schema: z.ZodType<ServiceUpdate>, stored: ServiceRow) {
  const nullable = (name: string) => form.one(name).trim() || null;
  const body = {
    name: form.one("name"),
    baseUrl: form.one("baseUrl").trim(),
    authMethod: form.one("authMethod"),
    authConfig: authConfigOf(form, form.one("authMethod"), true),
    networks: form.many("networks"),
    mode: form.one("mode"),
    description: nullable("description"),
    contactEmail: nullable("contactEmail"),
    categories: linesOf(form.one("categories")),
    docsHomepage: nullable("docsHomepage"),
    docsApiReference: nullable("docsApiReference"),
    docsLlms: nullable("docsLlms"),
    xGuidance: nullable("xGuidance"),
    publicRoutes: linesOf(form.one("publicRoutes")),
    siwxRoutes: linesOf(form.one("siwxRoutes")),
  };
  return { parsed: parsedWith(schema, body, serviceFieldOf), values: typedService(form, serviceValuesOf(stored).storedSecrets) };
}

export const serviceErrorsOf = (err: unknown) => formErrorsOf(err, serviceFieldOf);

const text = (v: ServiceFormValues | PaywallFormValues, name: string) => (v as unknown as Record<string, string>)[name] ?? "";

function TextField({
  values,
  errors,
  name,
  id,
  label,
  type = "text",
  hint,
  multiline,
  required,
}: {
  values: ServiceFormValues | PaywallFormValues;
  errors?: FormErrors | undefined;
  name: string;
  id: string;
  label: string;
  type?: string;
  hint?: string;
  multiline?: boolean;
  required?: boolean;
}) {
  return (
    <Field errors={errors} name={name} id={id} label={label} hint={hint}>
      {(a) =>
        multiline ? (
          <textarea {...a} id={id} name={name}>
            {text(values, name)}
          </textarea>
        ) : (
          <input {...a} id={id} type={type} name={name} value={text(values, name)} required={required} />
        )
      }
    </Field>
  );
}

/** The service's discovery fields (docs/discovery.md), in the order the form shows them. */
const DISCOVERY_FIELDS: { name: string; label: string; type?: string; hint?: string; multiline?: boolean }[] = [
  { name: "contactEmail", label: "Contact e-mail", type: "email" },
  { name: "categories", label: "Categories", hint: "Comma-separated, e.g. weather, maps." },
  { name: "docsHomepage", label: "Documentation homepage", type: "url" },
  { name: "docsApiReference", label: "API reference URL", type: "url" },
  { name: "docsLlms", label: "llms.txt URL", type: "url" },
  { name: "xGuidance", label: "Guidance for agents", multiline: true },
  { name: "publicRoutes", label: "Public routes", hint: "Paths served without payment, one per line.", multiline: true },
  {
    name: "siwxRoutes",
    label: "Sign-in-with-wallet routes",
    hint: "Paths that ask the buyer's wallet to sign in, one per line.",
    multiline: true,
  },
];

/** The networks, one group per mode: a service (and its paywalls) accepts the networks of its mode only. */
function NetworkBoxes({
  errors,
  idPrefix,
  checked,
  modes = ["testnet", "mainnet"],
}: {
  errors?: FormErrors | undefined;
  idPrefix: string;
  checked: string[];
  modes?: ("testnet" | "mainnet")[];
}) {
  return (
    <FieldGroup
      errors={errors}
      name="networks"
      id={`${idPrefix}-networks`}
      legend="Networks"
      hint={
        modes.length > 1
          ? "The networks buyers may pay on, of the service's mode."
          : `Networks of the service's mode (${modes[0]}).`
      }
    >
      {(a) => (
        <div class="network-modes">
          {modes.map((mode, m) => (
            <div>
              <p class="hint">{mode === "testnet" ? "Testnet" : "Mainnet"}</p>
              {NETWORKS_BY_MODE[mode].map((n, i) => (
                <label for={`${idPrefix}-net-${n}`}>
                  <input
                    {...boxAttrs(a, m + i)}
                    id={`${idPrefix}-net-${n}`}
                    type="checkbox"
                    name="networks"
                    value={n}
                    checked={checked.includes(n)}
                  />
                  <span>{n}</span>
                </label>
              ))}
            </div>
          ))}
        </div>
      )}
    </FieldGroup>
  );
}

export function ServiceFields({
  values,
  errors,
  editing,
}: {
  values: ServiceFormValues;
  errors?: FormErrors | undefined;
  editing: boolean;
}) {
  const id = serviceFieldId;
  return (
    <>
      <TextField values={values} errors={errors} name="name" id={id("name")} label="Name" required />
      <TextField
        values={values}
        errors={errors}
        name="baseUrl"
        id={id("baseUrl")}
        label="Base URL"
        type="url"
        hint="The upstream API's address, e.g. https://api.example.com/ (public http or https)."
        required
      />
      <TextField values={values} errors={errors} name="description" id={id("description")} label="Description" multiline />
      <Choices
        type="radio"
        errors={errors}
        name="mode"
        id={id("mode")}
        legend="Mode"
        hint="Testnet networks for trying out, mainnet for real money."
        options={[
          ["testnet", "testnet"],
          ["mainnet", "mainnet"],
        ]}
        checked={[values.mode]}
      />
      <NetworkBoxes errors={errors} idPrefix="svc" checked={values.networks} />
      <fieldset>
        <legend>Upstream authentication</legend>
        <p class="hint">
          How the platform authenticates to your API. Credentials are encrypted at rest and never shown again
          {editing ? "; leave a secret empty to keep the stored one" : ""}. Only the fields of the chosen method are sent.
        </p>
        <Field errors={errors} name="authMethod" id={id("authMethod")} label="Method">
          {(a) => (
            <select {...a} id={id("authMethod")} name="authMethod" data-auth-method>
              {AUTH_METHODS.map((m) => (
                <option value={m} selected={values.authMethod === m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </Field>
        {AUTH_FIELDS.map((f) => {
          const secret = isSecret(f);
          const stored = values.storedSecrets.includes(f);
          const hint = `For ${methodsUsing(f).join(", ")}.${secret ? (stored ? " Stored; leave empty to keep it." : " Write-only.") : ""}`;
          return (
            <div data-auth-for={methodsUsing(f).join(" ")}>
              <Field errors={errors} name={`auth.${f}`} id={id(`auth.${f}`)} label={AUTH_FIELD_LABELS[f] as string} hint={hint}>
                {(a) =>
                  secret ? (
                    <input {...a} id={id(`auth.${f}`)} type="password" name={`auth.${f}`} value="" autocomplete="new-password" />
                  ) : (
                    <input {...a} id={id(`auth.${f}`)} type="text" name={`auth.${f}`} value={values.auth[f] ?? ""} />
                  )
                }
              </Field>
            </div>
          );
        })}
      </fieldset>
      <fieldset>
        <legend>Discovery</legend>
        <p class="hint">What buyers and agents learn about the service.</p>
        {DISCOVERY_FIELDS.map((f) => (
          <TextField values={values} errors={errors} id={id(f.name)} {...f} />
        ))}
      </fieldset>
    </>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Paywalls

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
});

export const paywallValuesOf = (p: PaywallRow): PaywallFormValues => ({
  slug: p.slug,
  name: p.name,
  price: formatUsdc(p.price).replace(/\.?0+$/, ""),
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
});

const PRICE_WORDS = "Must be a decimal amount from 0.000001 to 1,000,000,000 with at most 6 decimals, e.g. 0.01";

/** The price typed in USDC as the API's micro-units (or a marker the price rule refuses). */
const priceOf = (form: FormReader) => parseUsdc(form.one("price")) ?? "invalid";

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

export function PaywallFields({
  values,
  errors,
  services,
  editing,
}: {
  values: PaywallFormValues;
  errors?: FormErrors | undefined;
  services: { id: string; name: string; networks: string[] }[];
  editing: boolean;
}) {
  const id = paywallFieldId;
  return (
    <>
      {editing ? (
        <p>
          Slug <code>{values.slug}</code> <span class="hint">(part of the payment URL; it does not change)</span>
        </p>
      ) : (
        <TextField
          values={values}
          errors={errors}
          name="slug"
          id={id("slug")}
          label="Slug"
          hint="Lowercase letters, digits, '.', '_' and '-': the last part of the payment URL."
          required
        />
      )}
      <TextField values={values} errors={errors} name="name" id={id("name")} label="Name" required />
      <TextField
        values={values}
        errors={errors}
        name="price"
        id={id("price")}
        label="Price (USDC)"
        hint="Per request, e.g. 0.01 (at most 6 decimals)."
        required
      />
      <TextField values={values} errors={errors} name="description" id={id("description")} label="Description" multiline />
      <Field
        errors={errors}
        name="serviceId"
        id={id("serviceId")}
        label="Service"
        hint="A route of a service, or none for a standalone upstream URL."
      >
        {(a) => (
          <select {...a} id={id("serviceId")} name="serviceId" data-paywall-service={editing ? undefined : ""}>
            <option value="">None</option>
            {services.map((s) => (
              <option value={s.id} selected={values.serviceId === s.id} data-networks={s.networks.join(" ")}>
                {s.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Choices
        type="radio"
        errors={errors}
        name="targetType"
        id={id("targetType")}
        legend="Target"
        hint="What a paid request reaches."
        options={[
          ["ROUTE", "A route of the service"],
          ["PROXY", "An upstream URL"],
        ]}
        checked={[values.targetType]}
      />
      <TextField
        values={values}
        errors={errors}
        name="targetRoute"
        id={id("targetRoute")}
        label="Route"
        hint={
          editing
            ? "For a route target: the path on the service, e.g. /v1/forecast."
            : "For a route target: the path on the service, e.g. /v1/forecast; empty: / and the slug."
        }
      />
      <TextField
        values={values}
        errors={errors}
        name="targetUrl"
        id={id("targetUrl")}
        label="Upstream URL"
        type="url"
        hint="For an upstream URL target."
      />
      <NetworkBoxes errors={errors} idPrefix="pw" checked={values.networks} />
      <Choices
        type="checkbox"
        errors={errors}
        name="allowedMethods"
        id={id("allowedMethods")}
        boxIds={id("method")}
        legend="Methods"
        hint="The HTTP methods buyers may pay for."
        options={HTTP_METHODS.map((m) => [m, m] as const)}
        checked={values.allowedMethods}
      />
      {!editing && (
        <Choices
          type="radio"
          errors={errors}
          name="fulfillmentMode"
          id={id("fulfillmentMode")}
          legend="Fulfilment"
          options={[
            ["PROXY", "Answer with the upstream's response"],
            ["SIGNED_URL", "Answer with a one-time signed URL"],
          ]}
          checked={[values.fulfillmentMode]}
        />
      )}
      <TextField
        values={values}
        errors={errors}
        name="timeout"
        id={id("timeout")}
        label="Upstream timeout (seconds)"
        type="number"
        hint="30 to 3600."
      />
      <fieldset>
        <legend>Cache</legend>
        <p class="hint">
          Serve the next buyers of the same request from the edge cache: each still pays, the upstream is called once. Leave empty
          for no caching.
        </p>
        <TextField
          values={values}
          errors={errors}
          name="cacheTtlSeconds"
          id={id("cacheTtlSeconds")}
          label="Cache answers for (seconds)"
          type="number"
          hint="0 to 86400; empty or 0: never cached."
        />
        <TextField
          values={values}
          errors={errors}
          name="cacheVaryQuery"
          id={id("cacheVaryQuery")}
          label="Vary on query parameters"
          hint="Comma-separated names, e.g. city, days; empty: the whole query string."
        />
        <TextField
          values={values}
          errors={errors}
          name="cacheVaryHeaders"
          id={id("cacheVaryHeaders")}
          label="Vary on headers"
          hint="Comma-separated header names; empty: every header forwarded upstream."
        />
        <div class="field">
          <label for={id("cacheVaryBody")} class="inline-check">
            <input id={id("cacheVaryBody")} type="checkbox" name="cacheVaryBody" value="true" checked={values.cacheVaryBody} />{" "}
            Vary on the body: requests with different bodies get different answers (POST, PUT, PATCH)
          </label>
        </div>
        <TextField
          values={values}
          errors={errors}
          name="cacheStatuses"
          id={id("cacheStatuses")}
          label="Cached statuses"
          hint="Comma-separated upstream statuses from 200 to 399; empty: 200 only."
        />
      </fieldset>
      <fieldset>
        <legend>What agents are told</legend>
        <p class="hint">
          JSON Schema 2020-12 objects, shown in the discovery document and the 402s. The input: the query parameters of a GET, the
          JSON body otherwise. Empty: none.
        </p>
        <TextField
          values={values}
          errors={errors}
          name="inputSchema"
          id={id("inputSchema")}
          label="Input schema (JSON)"
          hint='e.g. {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'
          multiline
        />
        <TextField
          values={values}
          errors={errors}
          name="outputSchema"
          id={id("outputSchema")}
          label="Output schema (JSON)"
          hint="The answer's JSON: an object or array schema."
          multiline
        />
      </fieldset>
      {!editing && (
        <div class="field">
          <label for={id("enabled")} class="inline-check">
            <input id={id("enabled")} type="checkbox" name="enabled" value="true" checked={values.enabled} /> Enabled: buyers can
            pay for it at once
          </label>
        </div>
      )}
    </>
  );
}
