/**
 * The service form's values and bodies: the stored service (secrets never) or what was typed, read back into the API's
 * request bodies and validated by the API's own schemas (src/core/catalog/), so the dashboard applies exactly the API's
 * rules. Write-only secret fields: left empty on an edit, a stored secret is kept (the API's `***`).
 */
import type { z } from "zod";
import type { ServiceCreate, ServiceUpdate } from "../../../core/catalog/services.ts";
import { AUTH_CONFIG_FIELDS, AUTH_METHODS, type AuthMethod, isSecretField } from "../../../core/secrets/auth-config.ts";
import { MASK } from "../../../core/secrets/secret-box.ts";
import type { ServiceRow } from "../../../db/schema.ts";
import { type FormReader, formErrorsOf, linesOf } from "../../forms.tsx";
import { parsedWith } from "./parse.ts";

/** Every credential field of any method, once, with the label people see. */
export const AUTH_FIELD_LABELS: Record<string, string> = {
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
export const AUTH_FIELDS = Object.keys(AUTH_FIELD_LABELS);

export const methodsUsing = (field: string) =>
  AUTH_METHODS.filter((m) => [...AUTH_CONFIG_FIELDS[m].names, ...AUTH_CONFIG_FIELDS[m].secrets].includes(field));

export const isSecret = (field: string) => methodsUsing(field).some((m) => isSecretField(m, field));

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
