import { headerNameProblem, headerValueProblem, paramNameProblem } from "../../lib/header-rules.ts";
import type { Issue } from "../../lib/issues.ts";

export const AUTH_METHODS = [
  "none",
  "bearer",
  "token",
  "x-api-key",
  "custom-header",
  "query-param",
  "bearer-customer",
  "x-api-key-secret",
  "json-body-field",
] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

interface FieldSpec {
  /** Names that say where a credential goes; stored and returned in clear. */
  names: readonly string[];
  /** Credential values; encrypted at rest and returned as `***`. */
  secrets: readonly string[];
}

/** The authConfig fields each authMethod takes; all are required. */
export const AUTH_CONFIG_FIELDS: Record<AuthMethod, FieldSpec> = {
  none: { names: [], secrets: [] },
  bearer: { names: [], secrets: ["bearerToken"] },
  token: { names: [], secrets: ["token"] },
  "x-api-key": { names: [], secrets: ["apiKey"] },
  "custom-header": { names: ["headerName"], secrets: ["headerValue"] },
  "query-param": { names: ["paramName"], secrets: ["paramValue"] },
  "bearer-customer": { names: [], secrets: [] },
  "x-api-key-secret": { names: [], secrets: ["apiKey", "apiSecret"] },
  "json-body-field": { names: ["fieldName"], secrets: ["fieldValue"] },
};

/**
 * What each field's value becomes upstream, and so its rule: a header name (not a reserved one), a query or JSON
 * field name, or a one-line value (a header value: no control character but TAB, no line separator). `paramValue` and
 * `fieldValue` are encoded where they go, but a credential with a control character in it is a mistake, never a
 * credential: refused alike.
 */
const VALUE_RULES: Record<string, (value: string) => string | null> = {
  headerName: headerNameProblem,
  paramName: paramNameProblem,
  fieldName: paramNameProblem,
  bearerToken: headerValueProblem,
  token: headerValueProblem,
  apiKey: headerValueProblem,
  apiSecret: headerValueProblem,
  headerValue: headerValueProblem,
  paramValue: headerValueProblem,
  fieldValue: headerValueProblem,
};

export const isSecretField = (method: AuthMethod, field: string) => AUTH_CONFIG_FIELDS[method].secrets.includes(field);

/**
 * Problems of an authConfig for its method: missing and unknown fields, and values that break the rule of where
 * they go (VALUE_RULES). `stored` holds the fields
 * already saved (for `***` placeholders on update), which count as present only for secret fields.
 */
export function authConfigIssues(
  method: AuthMethod,
  config: Record<string, string>,
  stored: Record<string, string> = {},
): Issue[] {
  const spec = AUTH_CONFIG_FIELDS[method];
  const allowed = [...spec.names, ...spec.secrets];
  const issues: Issue[] = [];
  for (const field of Object.keys(config)) {
    if (!allowed.includes(field)) {
      issues.push({
        path: `authConfig.${field}`,
        message: allowed.length
          ? `Unknown field for authMethod "${method}" (expected ${allowed.join(", ")})`
          : `authMethod "${method}" takes no authConfig fields`,
      });
    }
  }
  for (const field of allowed) {
    const value = config[field];
    if (value === undefined) {
      issues.push({ path: `authConfig.${field}`, message: `Required for authMethod "${method}"` });
    } else if (value === "***") {
      if (!(isSecretField(method, field) && stored[field] !== undefined)) {
        issues.push({ path: `authConfig.${field}`, message: `"***" keeps a stored secret, but none is stored for this field` });
      }
    } else {
      const problem = VALUE_RULES[field]?.(value);
      if (problem) issues.push({ path: `authConfig.${field}`, message: problem });
    }
  }
  return issues;
}

/** The response form: names in clear, secrets as `***`. */
export function maskAuthConfig(method: string, stored: Record<string, string>): Record<string, string> {
  const spec = AUTH_CONFIG_FIELDS[method as AuthMethod];
  return Object.fromEntries(
    Object.keys(stored).map((field) => [field, spec?.names.includes(field) ? (stored[field] as string) : "***"]),
  );
}
