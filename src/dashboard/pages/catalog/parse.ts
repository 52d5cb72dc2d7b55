/** A form's body validated by the API's own schema: the body, or the form's errors on their fields. */
import type { z } from "zod";
import { issuesOf } from "../../../lib/issues.ts";
import { addError, type FormErrors, noErrors } from "../../forms.tsx";

export type Parsed<T> = { body: T; errors?: undefined } | { body?: undefined; errors: FormErrors };

export function parsedWith<S extends z.ZodType>(
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
