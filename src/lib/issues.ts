import type { ZodError } from "zod";

/** One problem of an input: where (`field.sub.0`, or "" for the whole input) and what. The one validation vocabulary. */
export interface Issue {
  path: string;
  message: string;
}

/** One `{path, message}` per problem of a failed schema; an unknown field is named by its own path. */
export function issuesOf(error: ZodError): Issue[] {
  return error.issues.flatMap((issue): Issue[] => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "Unknown field" }));
    }
    return [{ path: base, message: issue.message }];
  });
}

/** One line for people: `path: message; path: message` (a pathless issue is its message alone). */
export const formatIssues = (issues: readonly Issue[]): string =>
  issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ");
