// JSON Schema (the subset our OpenAPI 3.1 document uses) → fast-check arbitraries, and a validator for the same subset.
//
// Subset: `$ref` to `#/components/schemas/*`, `allOf` (merged), `anyOf`/`oneOf`, `type` (string or array of types, for
// nullable), `enum`, `const`, strings with `minLength`/`maxLength`/`pattern`/`format` (uri, email, date-time), integers and
// numbers with `minimum`/`maximum` (and the exclusive forms), booleans, `null`, arrays with `items`/`minItems`/`maxItems`/
// `uniqueItems`, objects with `properties`/`required`/`additionalProperties` (false, a schema, or free-form `{}`/true)
// and `propertyNames`.
//
// String length: JSON Schema counts code points (zod 4's min/max do too); `lengthUnit: "utf16"` counts `String.length`
// units instead, for schemas of another origin.
import fc from "fast-check";

export type Schema = { [keyword: string]: unknown };

export interface Parameter {
  name: string;
  in: "query" | "path" | "header" | "cookie";
  required?: boolean;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
}

export interface Operation {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
  security?: unknown[];
}

export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export type LengthUnit = "utf16" | "code-point";

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** Every operation of the document, as `METHOD /path`. */
export function operationsOf(doc: OpenApiDoc): { id: string; method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => (HTTP_METHODS as readonly string[]).includes(method))
      .map(([method, op]) => ({ id: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op })),
  );
}

/** The JSON request-body schema of an operation, if it takes one. */
export const requestSchema = (op: Operation): Schema | undefined => op.requestBody?.content["application/json"]?.schema;

/** The JSON response schema for a status, if documented. */
export const responseSchema = (op: Operation, status: number): Schema | undefined =>
  op.responses[String(status)]?.content?.["application/json"]?.schema;

// ---------------------------------------------------------------------------------------------------------------
// Normalization: $ref and allOf

const REF_PREFIX = "#/components/schemas/";

/** Follows `$ref`s and merges `allOf` into one schema (properties merged, `required` concatenated). */
export function resolveSchema(doc: OpenApiDoc, schema: Schema, seen: string[] = []): Schema {
  let current = schema;
  while (typeof current.$ref === "string") {
    const ref = current.$ref;
    if (!ref.startsWith(REF_PREFIX)) throw new Error(`Unsupported $ref ${ref}`);
    if (seen.includes(ref)) throw new Error(`Recursive $ref ${ref}`);
    seen = [...seen, ref];
    const target = doc.components.schemas[ref.slice(REF_PREFIX.length)];
    if (!target) throw new Error(`Unknown $ref ${ref}`);
    const { $ref: _ref, ...siblings } = current;
    current = { ...target, ...siblings };
  }
  if (Array.isArray(current.allOf)) {
    const { allOf, ...rest } = current;
    let merged: Schema = { ...rest };
    for (const part of allOf as Schema[]) {
      const resolved = resolveSchema(doc, part, seen);
      merged = mergeSchemas(merged, resolved);
    }
    return merged;
  }
  return current;
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (a.properties || b.properties) out.properties = { ...(a.properties as object), ...(b.properties as object) };
  if (a.required || b.required)
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  return out;
}

export const typesOf = (schema: Schema): string[] | undefined =>
  schema.type === undefined ? undefined : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];

export const isNullable = (doc: OpenApiDoc, schema: Schema): boolean => {
  const s = resolveSchema(doc, schema);
  if (typesOf(s)?.includes("null")) return true;
  if (Array.isArray(s.enum)) return s.enum.includes(null);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  return alternatives?.some((alt) => isNullable(doc, alt)) ?? false;
};

// ---------------------------------------------------------------------------------------------------------------
// Strings

export const lengthOf = (value: string, unit: LengthUnit) => (unit === "utf16" ? value.length : [...value].length);

/** The longest prefix of `value` with at most `max` units that does not split a surrogate pair. */
export function truncate(value: string, max: number, unit: LengthUnit = "code-point"): string {
  let out = "";
  for (const ch of value) {
    if (lengthOf(out + ch, unit) > max) break;
    out += ch;
  }
  return out;
}

/** Addresses zod's `z.email()` accepts (the doc's `format: email`): conservative on purpose. */
export const emailArbitrary = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.stringMatching(/^[a-z0-9_+-]{1,12}$/),
      fc.option(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { nil: undefined }),
      fc.stringMatching(/^[a-z0-9]{1,10}$/),
      fc.constantFrom("com", "org", "io", "example"),
    )
    .map(([local, more, domain, tld]) => `${local}${more ? `.${more}` : ""}@${domain}.${tld}`);

/** Public http(s) URLs: what `format: uri` fields of this API (upstream URLs) accept. */
export const PUBLIC_ORIGINS = [
  "https://api.example.com",
  "https://api.weather.example.com",
  "http://example.org",
  "https://sub.domain.example.net:8443",
  "https://www.iana.org",
] as const;

export const publicUrlArbitrary = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom(...PUBLIC_ORIGINS),
      fc.array(fc.stringMatching(/^[A-Za-z0-9_.~-]{1,12}$/), { maxLength: 3 }),
      fc.option(fc.stringMatching(/^[a-z]{1,5}=[a-z0-9]{0,5}$/), { nil: undefined }),
    )
    .map(([origin, segments, query]) => `${origin}${segments.length ? `/${segments.join("/")}` : ""}${query ? `?${query}` : ""}`);

export const dateTimeArbitrary = (): fc.Arbitrary<string> =>
  fc
    .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
    .map((d) => d.toISOString());

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries

export interface ArbitraryOptions {
  /** Longest string generated in the common case; a string's `maxLength` itself is still generated now and then. */
  maxStringLength?: number;
  /** Longest array generated in the common case; `maxItems` itself is still generated now and then. */
  maxArrayLength?: number;
  /** Most keys of a generated free-form object or record. */
  maxObjectKeys?: number;
  /** Depth of free-form JSON values. */
  maxJsonDepth?: number;
  /** Generators for `format`s (override or add to uri, email, date-time). */
  formats?: Record<string, fc.Arbitrary<string>>;
  /** Keys never generated for records and free-form objects (e.g. `__proto__`, which JavaScript objects cannot round-trip). */
  forbiddenKeys?: string[];
  lengthUnit?: LengthUnit;
  /** Every declared property present, no nulls where another type is allowed, non-empty arrays and records: a rich base for mutations. */
  full?: boolean;
}

const DEFAULTS = {
  maxStringLength: 24,
  maxArrayLength: 4,
  maxObjectKeys: 4,
  maxJsonDepth: 2,
  forbiddenKeys: ["__proto__"],
  lengthUnit: "code-point" as LengthUnit,
  full: false,
};

/** Strings of mixed alphabets: printable ASCII mostly, full Unicode graphemes and ASCII control characters sometimes. */
function textArbitrary(minLength: number, maxLength: number, unit: LengthUnit): fc.Arbitrary<string> {
  const raw = fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength }) },
  );
  return raw.map((s) => {
    const cut = truncate(s, maxLength, unit);
    return lengthOf(cut, unit) >= minLength ? cut : cut + "a".repeat(minLength - lengthOf(cut, unit));
  });
}

/** A string of exactly `length` units: ASCII or astral characters (2 UTF-16 units, 1 code point each). */
function exactLengthString(length: number, unit: LengthUnit): fc.Arbitrary<string> {
  const ascii = fc.constantFrom("a", "Z", "7", "~").map((c) => c.repeat(length));
  if (unit === "code-point") return fc.oneof(ascii, fc.constant("😀".repeat(length)));
  return fc.oneof(
    ascii,
    fc.constant("é".repeat(length)),
    fc.constant(`${"😀".repeat(Math.floor(length / 2))}${length % 2 ? "a" : ""}`),
  );
}

export function arbitraryFromSchema(doc: OpenApiDoc, schema: Schema, options: ArbitraryOptions = {}): fc.Arbitrary<unknown> {
  const o = { ...DEFAULTS, ...options };
  const build = (input: Schema, depth: number): fc.Arbitrary<unknown> => {
    const s = resolveSchema(doc, input);
    if ("const" in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (alternatives) return fc.oneof(...alternatives.map((alt) => build(alt, depth)));
    const types = typesOf(s);
    if (!types) return freeJson(depth);
    if (types.length > 1) {
      if (o.full) return build({ ...s, type: types.find((t) => t !== "null") }, depth);
      return fc.oneof(...types.map((type) => ({ weight: type === "null" ? 1 : 3, arbitrary: build({ ...s, type }, depth) })));
    }
    switch (types[0]) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return integerArbitrary(s);
      case "number":
        return numberArbitrary(s);
      case "string":
        return stringArbitrary(s);
      case "array":
        return arrayArbitrary(s, depth);
      case "object":
        return objectArbitrary(s, depth);
      default:
        throw new Error(`Unsupported type ${String(types[0])}`);
    }
  };

  const freeJson = (depth: number): fc.Arbitrary<unknown> =>
    fc
      .jsonValue({ maxDepth: Math.max(0, o.maxJsonDepth - depth) })
      .map((v) => JSON.stringify(v))
      .filter((text) => !o.forbiddenKeys.some((key) => text.includes(JSON.stringify(key))))
      .map((text) => JSON.parse(text) as unknown);

  const keyArbitrary = () =>
    fc
      .string({
        unit: fc.oneof(fc.constant("x"), fc.constant("é"), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 })),
        minLength: 1,
        maxLength: 12,
      })
      .filter((k) => !o.forbiddenKeys.includes(k));

  const integerArbitrary = (s: Schema) => {
    const min =
      (s.minimum as number | undefined) ?? (s.exclusiveMinimum !== undefined ? (s.exclusiveMinimum as number) + 1 : -(2 ** 31));
    const max =
      (s.maximum as number | undefined) ?? (s.exclusiveMaximum !== undefined ? (s.exclusiveMaximum as number) - 1 : 2 ** 31);
    return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  };

  const numberArbitrary = (s: Schema) =>
    fc.double({
      min: (s.minimum as number | undefined) ?? -1e9,
      max: (s.maximum as number | undefined) ?? 1e9,
      noNaN: true,
      noDefaultInfinity: true,
    });

  const stringArbitrary = (s: Schema): fc.Arbitrary<string> => {
    const minLength = (s.minLength as number | undefined) ?? 0;
    const maxLength = (s.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
    const fits = (v: string) => lengthOf(v, o.lengthUnit) >= minLength && lengthOf(v, o.lengthUnit) <= maxLength;
    const format = s.format as string | undefined;
    const formats: Record<string, fc.Arbitrary<string>> = {
      uri: publicUrlArbitrary(),
      email: emailArbitrary(),
      "date-time": dateTimeArbitrary(),
      ...o.formats,
    };
    if (format && formats[format]) return formats[format].filter(fits);
    if (typeof s.pattern === "string") {
      // Truncating to maxLength keeps anchored-prefix patterns (`^\/`) and character-class patterns matching; the filter
      // re-checks, so a pattern truncation could break (`^0x[a-f0-9]{40}$`) is only ever truncated when it has a maxLength.
      const regex = new RegExp(s.pattern);
      return fc
        .stringMatching(regex)
        .map((v) => (Number.isFinite(maxLength) ? truncate(v, maxLength, o.lengthUnit) : v))
        .filter((v) => fits(v) && regex.test(v));
    }
    const common = textArbitrary(minLength, Math.min(maxLength, Math.max(minLength, o.maxStringLength)), o.lengthUnit);
    const boundaries: fc.Arbitrary<string>[] = [];
    if (Number.isFinite(maxLength) && maxLength > o.maxStringLength) boundaries.push(exactLengthString(maxLength, o.lengthUnit));
    if (minLength > 0) boundaries.push(exactLengthString(minLength, o.lengthUnit));
    return boundaries.length
      ? fc.oneof({ weight: 8, arbitrary: common }, ...boundaries.map((arbitrary) => ({ weight: 1, arbitrary })))
      : common;
  };

  const arrayArbitrary = (s: Schema, depth: number): fc.Arbitrary<unknown[]> => {
    const items = build((s.items as Schema | undefined) ?? {}, depth + 1);
    const maxItems = (s.maxItems as number | undefined) ?? Number.POSITIVE_INFINITY;
    const minLength = Math.min(maxItems, Math.max((s.minItems as number | undefined) ?? 0, o.full ? 1 : 0));
    const cap = Math.min(maxItems, Math.max(minLength, o.maxArrayLength));
    const common = s.uniqueItems
      ? fc.uniqueArray(items, { minLength, maxLength: cap, selector: (v) => JSON.stringify(v) })
      : fc.array(items, { minLength, maxLength: cap });
    if (!Number.isFinite(maxItems) || maxItems <= cap || s.uniqueItems || o.full) return common;
    return fc.oneof(
      { weight: 8, arbitrary: common },
      { weight: 1, arbitrary: fc.array(items, { minLength: maxItems, maxLength: maxItems }) },
    );
  };

  const objectArbitrary = (s: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> => {
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
    const required = (s.required as string[] | undefined) ?? [];
    const declared = Object.keys(properties);
    const model = Object.fromEntries(declared.map((key) => [key, build(properties[key] as Schema, depth + 1)]));
    const requiredKeys = o.full ? declared : required.filter((k) => declared.includes(k));
    const fixed = fc.record(model, { requiredKeys, noNullPrototype: true }) as fc.Arbitrary<Record<string, unknown>>;
    const extra = s.additionalProperties;
    if (extra === false || (declared.length > 0 && extra === undefined)) return fixed;
    const valueArb =
      typeof extra === "object" && extra !== null && Object.keys(extra).length > 0
        ? build(extra as Schema, depth + 1)
        : freeJson(depth + 1);
    const names =
      typeof s.propertyNames === "object" && s.propertyNames !== null
        ? (build(s.propertyNames as Schema, depth + 1) as fc.Arbitrary<string>)
        : keyArbitrary();
    const extras = fc.dictionary(
      names.filter((k) => !declared.includes(k) && !o.forbiddenKeys.includes(k)),
      valueArb,
      {
        minKeys: o.full && declared.length === 0 ? 1 : 0,
        maxKeys: o.maxObjectKeys,
        noNullPrototype: true,
      },
    );
    return fc.tuple(fixed, extras).map(([a, b]) => ({ ...b, ...a }));
  };

  return build(schema, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Validation

export interface ValidateOptions {
  lengthUnit?: LengthUnit;
  /**
   * Also report properties a schema does not declare when it leaves `additionalProperties` unset. JSON Schema allows them;
   * for responses of this API an undocumented field is a leak (e.g. a `tenantId` or a ciphertext), so the fuzz tests use it.
   */
  noUndocumentedProperties?: boolean;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const jsonType = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number"
        ? Number.isInteger(value)
          ? "integer"
          : "number"
        : typeof value;

const matchesType = (value: unknown, type: string): boolean => {
  const actual = jsonType(value);
  if (type === "number") return (actual === "number" || actual === "integer") && Number.isFinite(value as number);
  if (type === "integer") return actual === "integer" && Number.isFinite(value as number);
  return actual === type;
};

const deepEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every way `value` fails `schema`, as `path: message` strings; empty when it conforms. */
export function validateSchema(
  doc: OpenApiDoc,
  schema: Schema,
  value: unknown,
  options: ValidateOptions = {},
  path = "$",
): string[] {
  const unit = options.lengthUnit ?? "code-point";
  const s = resolveSchema(doc, schema);
  const errors: string[] = [];
  const fail = (message: string) => errors.push(`${path}: ${message}`);

  if ("const" in s && !deepEqual(s.const, value)) fail(`expected const ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value))) fail(`expected one of ${JSON.stringify(s.enum)}`);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives) {
    const passing = alternatives.filter((alt) => validateSchema(doc, alt, value, options, path).length === 0).length;
    if (passing === 0 || (s.oneOf && passing > 1)) fail(`${s.oneOf ? "oneOf" : "anyOf"}: ${passing} alternatives match`);
  }
  const types = typesOf(s);
  if (types && !types.some((t) => matchesType(value, t))) {
    fail(`expected type ${types.join("|")}, got ${jsonType(value)}${typeof value === "number" ? ` (${value})` : ""}`);
    return errors;
  }

  if (typeof value === "string") {
    const length = lengthOf(value, unit);
    if (typeof s.minLength === "number" && length < s.minLength) fail(`shorter than ${s.minLength}`);
    if (typeof s.maxLength === "number" && length > s.maxLength) fail(`longer than ${s.maxLength}`);
    if (typeof s.pattern === "string" && !new RegExp(s.pattern).test(value)) fail(`does not match ${s.pattern}`);
    if (s.format === "date-time" && !(ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)))) fail("not a date-time");
    if (s.format === "email" && !EMAIL.test(value)) fail("not an email");
    if (s.format === "uri" && !URL.canParse(value)) fail("not a URI");
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) fail(`below minimum ${s.minimum}`);
    if (typeof s.maximum === "number" && value > s.maximum) fail(`above maximum ${s.maximum}`);
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) fail(`not above ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) fail(`not below ${s.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) fail(`fewer than ${s.minItems} items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) fail(`more than ${s.maxItems} items`);
    if (s.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) fail("items not unique");
    if (s.items) {
      for (const [i, item] of value.entries())
        errors.push(...validateSchema(doc, s.items as Schema, item, options, `${path}[${i}]`));
    }
  }
  if (jsonType(value) === "object") {
    const record = value as Record<string, unknown>;
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
    for (const key of (s.required as string[] | undefined) ?? []) {
      if (!Object.hasOwn(record, key)) fail(`missing required property ${key}`);
    }
    for (const key of Object.keys(record)) {
      const child = `${path}.${key}`;
      if (typeof s.propertyNames === "object" && s.propertyNames !== null) {
        errors.push(...validateSchema(doc, s.propertyNames as Schema, key, options, `${child} (name)`));
      }
      if (Object.hasOwn(properties, key)) {
        errors.push(...validateSchema(doc, properties[key] as Schema, record[key], options, child));
      } else if (s.additionalProperties === false) {
        errors.push(`${child}: property not allowed`);
      } else if (typeof s.additionalProperties === "object" && s.additionalProperties !== null) {
        errors.push(...validateSchema(doc, s.additionalProperties as Schema, record[key], options, child));
      } else if (s.additionalProperties === undefined && options.noUndocumentedProperties && Object.keys(properties).length > 0) {
        errors.push(`${child}: undocumented property`);
      }
    }
  }
  return errors;
}
