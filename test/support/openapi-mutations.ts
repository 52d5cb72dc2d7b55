// Mutations of a valid JSON request body, derived from the body's schema in the OpenAPI document: every declared property
// gets the mutations its schema makes meaningful (missing when required, wrong type, below/above its bounds, outside its
// enum or pattern, oversized, unicode and control characters, lone surrogates, deep nesting, huge numbers), and every
// object gets unknown and prototype-polluting keys. Tokens JSON.stringify cannot write (1e400, "\ud800" escapes, a
// `__proto__` key, 10,000-deep nesting) are spliced into the JSON text.
//
// Whether a mutated body is still valid is not decided here: the fuzz test validates the parsed wire value against the
// document, so the oracle comes from the same schema as the generator.
import { isNullable, type OpenApiDoc, resolveSchema, type Schema, typesOf } from "./openapi-arbitraries.ts";

export interface BodyMutation {
  /** What was done, e.g. `name: longer than maxLength (101)`. */
  label: string;
  /** Where: the mutated property path, e.g. `headers.0.key` (`(body)` for the body itself). */
  at: string;
  /** The mutation family, for counting: missing, wrong-type, bounds, enum, pattern, oversized, unicode, ... */
  kind: string;
  /** The request body text for a base body of the same shape (the body the mutations were derived from, or a twin). */
  render: (base: unknown) => string;
}

export const DEEP_NESTING = 10_000;

/** Raw JSON tokens spliced into the text in place of placeholder strings. */
const RAW = {
  huge: "1e400",
  negativeHuge: "-1e400",
  pow64: "18446744073709551616",
  beyondSafe: "9007199254740993",
  loneHigh: '"a\\ud800b"',
  loneLow: '"\\udfff"',
  reversedPair: '"\\udc00\\ud800"',
  deepArray: `${"[".repeat(DEEP_NESTING)}${"]".repeat(DEEP_NESTING)}`,
  deepObject: `${'{"a":'.repeat(DEEP_NESTING)}1${"}".repeat(DEEP_NESTING)}`,
} as const;
type RawToken = keyof typeof RAW;

const placeholder = (token: RawToken) => `\u0001RAW:${token}\u0001`;
const PROTO_KEY = "\u0001KEY:__proto__\u0001";

/** JSON text of `value` with placeholders replaced by their raw tokens. */
export function toJsonText(value: unknown): string {
  let text = JSON.stringify(value);
  for (const token of Object.keys(RAW) as RawToken[]) {
    text = text.split(JSON.stringify(placeholder(token))).join(RAW[token]);
  }
  return text.split(JSON.stringify(PROTO_KEY)).join('"__proto__"');
}

type Path = (string | number)[];

const clone = <T>(value: T): T => structuredClone(value);

/** `root` with the value at `path` replaced by `change(current value)`. */
function updateAt(root: unknown, path: Path, change: (current: unknown) => unknown): unknown {
  if (path.length === 0) return change(root);
  const copy = clone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  node[last] = change(node[last]);
  return copy;
}

const asObject = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const label = (path: Path) => (path.length ? path.join(".") : "(body)");

const CONTROL = "\u0000\u0001\u0007\b\t\n\r\u000b\u000c\u001b[31m\u007f\u0085";
const TRICKY_UNICODE = [
  "\u202eevil\u202c",
  "\u200b\u200d\ufeff",
  "😀👩‍👩‍👧‍👦🏳️‍🌈",
  "ﷺ𒐫",
  "e\u0301\u0301\u0301",
  "Ω≈ç√∫",
  "\ud83d\ude00",
];
const WRONG_TYPE_VALUES: unknown[] = [12345, 1.5, "a string", true, null, [], {}, ["x"], { a: 1 }];

const repeatTo = (length: number) => "x".repeat(Math.max(0, length));

/** Mutations of `body` (a valid instance of `schema`). `maxOversized` bounds the "oversized" strings (under the body limit). */
export function bodyMutations(doc: OpenApiDoc, schema: Schema, body: unknown, maxOversized = 60_000): BodyMutation[] {
  const out: BodyMutation[] = [];
  /** A mutation setting the value at `path`: a constant, or a function of the base body's value there. */
  const add = (kind: string, what: string, path: Path, value: unknown) =>
    out.push({
      kind,
      at: label(path),
      label: `${label(path)}: ${what}`,
      render: (base) =>
        toJsonText(
          updateAt(base, path, (current) => (typeof value === "function" ? (value as (c: unknown) => unknown)(current) : value)),
        ),
    });

  const visit = (input: Schema, path: Path, current: unknown, depth: number) => {
    const s = resolveSchema(doc, input);
    const types = typesOf(s) ?? [];
    const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;

    // Wrong types: every JSON value whose type the schema does not allow.
    if (path.length > 0 && (types.length > 0 || Array.isArray(s.enum)) && !alternatives) {
      for (const wrong of WRONG_TYPE_VALUES) {
        const t =
          wrong === null
            ? "null"
            : Array.isArray(wrong)
              ? "array"
              : typeof wrong === "number"
                ? Number.isInteger(wrong)
                  ? "integer"
                  : "number"
                : typeof wrong;
        const allowed = types.includes(t) || (t === "integer" && types.includes("number"));
        if (!allowed && !(wrong === null && isNullable(doc, s)))
          add("wrong-type", `wrong type ${JSON.stringify(wrong)}`, path, wrong);
      }
      add("deep-nesting", `${DEEP_NESTING}-deep array`, path, placeholder("deepArray"));
      add("deep-nesting", `${DEEP_NESTING}-deep object`, path, placeholder("deepObject"));
    }

    if (Array.isArray(s.enum) || "const" in s) {
      const sample = (Array.isArray(s.enum) ? s.enum[0] : s.const) as unknown;
      if (typeof sample === "string") {
        add("enum", "outside the enum", path, "NOT_IN_ENUM");
        add(
          "enum",
          "enum value in another case",
          path,
          sample === sample.toLowerCase() ? sample.toUpperCase() : sample.toLowerCase(),
        );
        add("enum", "enum value with a trailing space", path, `${sample} `);
      }
      if (typeof sample === "boolean") add("enum", "the other boolean", path, !sample);
      return;
    }

    if (types.includes("string")) {
      const min = s.minLength as number | undefined;
      const max = s.maxLength as number | undefined;
      if (max !== undefined) {
        add("bounds", `longer than maxLength (${max + 1})`, path, repeatTo(max + 1));
        add("bounds", `maxLength in astral characters (${max} code points)`, path, "😀".repeat(max));
        add("bounds", `one astral character over maxLength (${max + 1} code points)`, path, "😀".repeat(max + 1));
      }
      if (min !== undefined && min > 0) add("bounds", `shorter than minLength (${min - 1})`, path, repeatTo(min - 1));
      add("oversized", `oversized string (${maxOversized})`, path, repeatTo(maxOversized));
      if (typeof s.pattern === "string") {
        const regex = new RegExp(s.pattern);
        for (const candidate of [" ", "UPPER CASE", "a/b c", "\u0000", "é", "../etc", "0x12"]) {
          if (!regex.test(candidate)) {
            add("pattern", `not matching ${s.pattern}: ${JSON.stringify(candidate)}`, path, candidate);
            break;
          }
        }
      }
      if (s.format === "uri") {
        for (const url of [
          "not a url",
          "//no-scheme.example.com",
          "javascript:alert(1)",
          "http://127.0.0.1/",
          "http://[::1]/",
          "file:///etc/passwd",
          "http://user:pass@example.com/",
          "https://localhost/",
        ]) {
          add("format", `uri ${JSON.stringify(url)}`, path, url);
        }
      }
      if (s.format === "email")
        for (const email of ["not-an-email", "a@", "@b.com", "a b@c.com"])
          add("format", `email ${JSON.stringify(email)}`, path, email);
      if (s.format === "date-time")
        for (const date of ["2026-13-45T99:99:99Z", "yesterday", "2026-11-22"])
          add("format", `date-time ${JSON.stringify(date)}`, path, date);
      add("unicode", "control characters", path, typeof s.pattern === "string" ? `/${CONTROL}` : CONTROL);
      for (const u of TRICKY_UNICODE)
        add("unicode", `unicode ${JSON.stringify(u)}`, path, typeof s.pattern === "string" ? `/${u}` : u);
      add("lone-surrogate", 'lone high surrogate "a\\ud800b"', path, placeholder("loneHigh"));
      add("lone-surrogate", 'lone low surrogate "\\udfff"', path, placeholder("loneLow"));
      add("lone-surrogate", 'reversed pair "\\udc00\\ud800"', path, placeholder("reversedPair"));
    }

    if (types.includes("integer") || types.includes("number")) {
      const min = s.minimum as number | undefined;
      const max = s.maximum as number | undefined;
      if (min !== undefined) add("bounds", `below minimum (${min - 1})`, path, min - 1);
      if (max !== undefined) add("bounds", `above maximum (${max + 1})`, path, max + 1);
      if (types.includes("integer")) add("bounds", "not an integer (1.5 over the minimum)", path, (min ?? 0) + 1.5);
      add("huge-number", "1e400", path, placeholder("huge"));
      add("huge-number", "-1e400", path, placeholder("negativeHuge"));
      add("huge-number", "2**64", path, placeholder("pow64"));
      add("huge-number", "2**53 + 1", path, placeholder("beyondSafe"));
      add("wrong-type", "number as a string", path, String(min ?? 1));
    }

    if (types.includes("array")) {
      const items = (s.items as Schema | undefined) ?? {};
      const list = Array.isArray(current) ? current : [];
      const minItems = s.minItems as number | undefined;
      const maxItems = s.maxItems as number | undefined;
      const items$ = (v: unknown) => (Array.isArray(v) ? v : []);
      if (maxItems !== undefined) {
        add("bounds", `more than maxItems (${maxItems + 1})`, path, (v: unknown) =>
          Array.from({ length: maxItems + 1 }, () => clone(items$(v)[0] ?? "x")),
        );
      }
      if (minItems !== undefined && minItems > 0)
        add("bounds", `fewer than minItems (${minItems - 1})`, path, (v: unknown) => items$(v).slice(0, minItems - 1));
      add(
        "oversized",
        "10,000 items",
        path,
        Array.from({ length: 10_000 }, () => 1),
      );
      if (list.length > 0) add("duplicate", "first item twice", path, (v: unknown) => [items$(v)[0], ...items$(v)]);
      add("wrong-type", "an item of the wrong type", path, (v: unknown) => [...items$(v), { unexpected: [1] }]);
      if (depth < 3 && list.length > 0) visit(items, [...path, 0], list[0], depth + 1);
    }

    if (types.includes("object")) {
      const present = current !== null && typeof current === "object" && !Array.isArray(current);
      const obj = present ? (current as Record<string, unknown>) : {};
      const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
      const required = (s.required as string[] | undefined) ?? [];
      const without = (key: string) => (o: unknown) => Object.fromEntries(Object.entries(asObject(o)).filter(([k]) => k !== key));
      const withKeys =
        (extra: Record<string, unknown>, first = false) =>
        (o: unknown) =>
          first ? { ...extra, ...asObject(o) } : { ...asObject(o), ...extra };
      for (const key of required) if (key in obj) add("missing", `required ${key} missing`, path, without(key));
      add("unknown-key", "unknown key", path, withKeys({ unknownField: 1 }));
      add("prototype-key", "__proto__ key", path, withKeys({ [PROTO_KEY]: { polluted: true } }, true));
      add("prototype-key", "constructor key", path, withKeys({ constructor: { prototype: { polluted: true } } }));
      add("prototype-key", "prototype key", path, withKeys({ prototype: { polluted: true } }));
      if (path.length === 0) {
        add("wrong-type", "body is an array", path, (o: unknown) => [o]);
        add("wrong-type", "body is null", path, null);
        add("wrong-type", "body is a string", path, "body");
      }
      if (present && depth < 3) {
        for (const [key, child] of Object.entries(properties)) visit(child, [...path, key], obj[key], depth + 1);
        const extra = s.additionalProperties;
        if (typeof extra === "object" && extra !== null && Object.keys(obj).length > 0) {
          const [firstKey] = Object.keys(obj) as [string];
          visit(extra as Schema, [...path, firstKey], obj[firstKey], depth + 1);
        }
      }
    }
  };

  visit(schema, [], body, 0);
  return out;
}

/** Malformed JSON texts and JSON texts that are not objects. */
export const MALFORMED_BODIES: { label: string; text: string }[] = [
  { label: "empty body", text: "" },
  { label: "whitespace", text: "   \n" },
  { label: "unterminated object", text: '{"name":"x"' },
  { label: "missing value", text: '{"name":}' },
  { label: "single quotes", text: "{'name':'x'}" },
  { label: "trailing comma", text: '{"name":"x",}' },
  { label: "trailing garbage", text: "{}x" },
  { label: "two documents", text: "{}{}" },
  { label: "NaN literal", text: '{"timeout":NaN}' },
  { label: "comment", text: '{/* c */"name":"x"}' },
  { label: "raw control character in a string", text: '{"name":"a\u0001b"}' },
  { label: "invalid escape", text: '{"name":"\\x41"}' },
  { label: "truncated unicode escape", text: '{"name":"\\ud8"}' },
  { label: "NUL outside a string", text: "{\u0000}" },
  { label: "null", text: "null" },
  { label: "array", text: "[]" },
  { label: "string", text: '"body"' },
  { label: "number", text: "1" },
  { label: "true", text: "true" },
  { label: "deep array", text: `${"[".repeat(DEEP_NESTING)}${"]".repeat(DEEP_NESTING)}` },
  { label: "deep object", text: `${'{"a":'.repeat(DEEP_NESTING)}1${"}".repeat(DEEP_NESTING)}` },
  { label: "unclosed deep array", text: "[".repeat(DEEP_NESTING) },
];
