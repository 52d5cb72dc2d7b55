/**
 * Form fields and their errors, the same way on every page: each error sits next to its field and starts with the
 * field's visible label; the field carries `aria-invalid` and `aria-describedby` (its hint and its error); the first
 * field with an error gets `autofocus`, so focus lands on it after the page loads, without JavaScript; a summary above
 * the form lists every error as a link to its field. Errors come from the same rules the API applies (an `ApiError`
 * with `{path, message}` issues, or a refusal naming one field), mapped to form fields by `fieldOf`.
 */
import type { Child } from "hono/jsx";
import { ApiError } from "../core/http/errors.ts";
import type { Issue } from "../lib/issues.ts";

/** Errors per form field name (in the order found), and those of no field (shown in the summary only). */
export interface FormErrors {
  fields: Map<string, string[]>;
  general: string[];
}

export const noErrors = (): FormErrors => ({ fields: new Map(), general: [] });

export const hasErrors = (e: FormErrors | undefined) => !!e && (e.fields.size > 0 || e.general.length > 0);

/**
 * The schema library's generic messages in plain words (the rules are the API's; only their wording changes here):
 * "Too small: expected string to have >=1 characters" → "Required".
 */
export function plainWords(message: string): string {
  if (/^Too small: expected string to have >=1 characters?$/.test(message)) return "Required";
  if (/^Too small: expected array to have >=1 items?$/.test(message)) return "Choose at least one";
  const big = /^Too big: expected (string|array) to have <=(\d+) (characters|items)$/.exec(message);
  if (big) return `At most ${big[2]} ${big[3]}`;
  if (/^Invalid option: expected one of /.test(message)) return "Choose one of the options";
  if (/^Invalid input: expected \w+, received undefined$/.test(message)) return "Required";
  return message;
}

export function addError(errors: FormErrors, field: string | null, message: string): FormErrors {
  const words = plainWords(message);
  if (field === null) errors.general.push(words);
  else errors.fields.set(field, [...(errors.fields.get(field) ?? []), words]);
  return errors;
}

/**
 * The form's errors for a refusal of the shared rules: one per issue of a `VALIDATION_ERROR`, the field of an
 * `SSRF_BLOCKED` or `INVALID_SERVICE`, and `fallback` (e.g. the slug for a `CONFLICT`) or the summary for the rest.
 * `fieldOf` maps an issue path (`networks.1`, `authConfig.bearerToken`) to a form field name, or `null` for none.
 * Anything but an `ApiError` is not a form error: `undefined`, and the caller rethrows it.
 */
export function formErrorsOf(
  err: unknown,
  fieldOf: (path: string) => string | null,
  fallback: Partial<Record<string, string>> = {},
): FormErrors | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const errors = noErrors();
  if (err.code === "VALIDATION_ERROR" && Array.isArray(err.details)) {
    for (const issue of err.details as Issue[]) addError(errors, fieldOf(issue.path), issue.message);
    return errors;
  }
  const [first] = Array.isArray(err.details) ? (err.details as Issue[]) : [];
  if (err.code === "SSRF_BLOCKED" && first) return addError(errors, fieldOf(first.path), err.message);
  if (err.code === "INVALID_SERVICE") return addError(errors, fieldOf("serviceId"), err.message);
  return addError(errors, fallback[err.code] ?? null, err.message);
}

/** A field's error list: "Label: message" for each. */
function ErrorText({ id, label, messages }: { id: string; label: string; messages: string[] }) {
  return (
    <p id={id} class="field-error">
      {messages.map((m, i) => (
        <>
          {i > 0 && <br />}
          <span>{`${label}: ${m}`}</span>
        </>
      ))}
    </p>
  );
}

/** The ids and attributes a field needs for its hint and error: `aria-invalid`, `aria-describedby`, `autofocus`. */
export function fieldState(errors: FormErrors | undefined, name: string, id: string, hint?: boolean) {
  const messages = errors?.fields.get(name) ?? [];
  const first = errors ? [...errors.fields.keys()][0] === name : false;
  const describedBy = [hint ? `${id}-hint` : null, messages.length > 0 ? `${id}-error` : null].filter(Boolean).join(" ");
  return {
    messages,
    attrs: {
      "aria-invalid": messages.length > 0 ? ("true" as const) : undefined,
      "aria-describedby": describedBy || undefined,
      autofocus: messages.length > 0 && first ? true : undefined,
    },
  };
}

interface FieldProps {
  errors?: FormErrors | undefined;
  /** The form field's name (also the error map's key). */
  name: string;
  id: string;
  label: string;
  hint?: Child;
  /** The control, given the attributes it must carry. */
  children: (attrs: ReturnType<typeof fieldState>["attrs"]) => Child;
}

/** A label, the control, its hint and its errors. */
export function Field({ errors, name, id, label, hint, children }: FieldProps) {
  const { messages, attrs } = fieldState(errors, name, id, hint !== undefined);
  return (
    <div class={messages.length > 0 ? "field invalid" : "field"}>
      <label for={id}>{label}</label>
      {hint !== undefined && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      {messages.length > 0 && <ErrorText id={`${id}-error`} label={label} messages={messages} />}
      {children(attrs)}
    </div>
  );
}

/**
 * A group of checkboxes or radios under a legend: the error names the legend; the first box carries `autofocus` and
 * each box `aria-describedby` the error.
 */
export function FieldGroup({
  errors,
  name,
  id,
  legend,
  hint,
  children,
}: {
  errors?: FormErrors | undefined;
  name: string;
  id: string;
  legend: string;
  hint?: Child;
  children: (attrs: ReturnType<typeof fieldState>["attrs"]) => Child;
}) {
  const { messages, attrs } = fieldState(errors, name, id, hint !== undefined);
  return (
    <fieldset id={id} class={messages.length > 0 ? "invalid" : undefined}>
      <legend>{legend}</legend>
      {hint !== undefined && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      {messages.length > 0 && <ErrorText id={`${id}-error`} label={legend} messages={messages} />}
      {children(attrs)}
    </fieldset>
  );
}

/** The attributes of the `i`th box of a group: all of them describe the error; only the first takes focus. */
export const boxAttrs = (attrs: ReturnType<typeof fieldState>["attrs"], i: number) =>
  i === 0 ? attrs : { ...attrs, autofocus: undefined };

/**
 * A `FieldGroup` of radios (one value) or checkboxes (several) named `name`, one per option: each labelled, checked
 * when its value is among `checked`.
 */
export function Choices({
  type,
  errors,
  name,
  id,
  legend,
  hint,
  options,
  checked,
  boxIds = id,
}: {
  type: "radio" | "checkbox";
  errors?: FormErrors | undefined;
  name: string;
  id: string;
  legend: string;
  hint?: Child;
  options: readonly (readonly [value: string, label: Child])[];
  checked: readonly string[];
  /** The boxes' ids are `<boxIds>-<value>` (default: the group's id), other characters than `[A-Za-z0-9_-]` as `-`. */
  boxIds?: string;
}) {
  const boxId = (value: string) => `${boxIds}-${value.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  return (
    <FieldGroup errors={errors} name={name} id={id} legend={legend} hint={hint}>
      {(a) => (
        <>
          {options.map(([value, label], i) => (
            <label for={boxId(value)}>
              <input
                {...boxAttrs(a, i)}
                id={boxId(value)}
                type={type}
                name={name}
                value={value}
                checked={checked.includes(value)}
              />
              <span>{label}</span>
            </label>
          ))}
        </>
      )}
    </FieldGroup>
  );
}

/** Every error of the form as a link to its field, above the form; `labels` gives each field's visible label. */
export function ErrorSummary({
  errors,
  labels,
  ids,
}: {
  errors: FormErrors | undefined;
  labels: Record<string, string>;
  ids: (field: string) => string;
}) {
  if (!hasErrors(errors) || !errors) return null;
  const count = [...errors.fields.values()].reduce((n, m) => n + m.length, 0) + errors.general.length;
  return (
    <div class="notice error" role="alert" aria-labelledby="error-summary-title">
      <p id="error-summary-title">
        <strong>
          {count === 1 ? "There is a problem; nothing was saved:" : `There are ${count} problems; nothing was saved:`}
        </strong>
      </p>
      <ul>
        {errors.general.map((m) => (
          <li>{m}</li>
        ))}
        {[...errors.fields].flatMap(([field, messages]) =>
          messages.map((m) => (
            <li>
              <a href={`#${ids(field)}`}>{`${labels[field] ?? field}: ${m}`}</a>
            </li>
          )),
        )}
      </ul>
    </div>
  );
}

/** Form values as one string each (the last of repeated names), or a list for the names given in `lists`. */
export async function readForm(req: { parseBody(o: { all: true }): Promise<Record<string, unknown>> }) {
  const body = await req.parseBody({ all: true });
  const one = (name: string) => {
    const v = body[name];
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    return typeof last === "string" ? last : "";
  };
  const many = (name: string) => ([] as unknown[]).concat(body[name] ?? []).filter((s): s is string => typeof s === "string");
  return { one, many, has: (name: string) => body[name] !== undefined };
}

export type FormReader = Awaited<ReturnType<typeof readForm>>;

/** Lines (or commas) of a textarea as a list, blanks dropped. */
export const linesOf = (value: string) =>
  value
    .split(/[\n,]/)
    .map((v) => v.trim())
    .filter(Boolean);
