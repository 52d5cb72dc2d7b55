/**
 * Free text we store and show (names, descriptions, guidance): well-formed Unicode, and no control characters that
 * a terminal, a log line or an HTML page would act on.
 *
 * - single-line text (`name`, `categories[]`, a paywall's `name`): no control character at all (C0, DEL, C1);
 * - multi-line text (`description`, `xGuidance`): TAB, LF and CR allowed, every other control character refused.
 */

const SINGLE_LINE_FORBIDDEN = /\p{Cc}/u;
const MULTI_LINE_FORBIDDEN = /(?![\t\n\r])\p{Cc}/u;

export type TextKind = "single-line" | "multi-line";

/** Why a text is refused, or `null`. */
export function textProblem(text: string, kind: TextKind): string | null {
  if (!text.isWellFormed()) return "Must be well-formed Unicode";
  if (kind === "single-line" && SINGLE_LINE_FORBIDDEN.test(text)) return "Must not contain control characters";
  if (kind === "multi-line" && MULTI_LINE_FORBIDDEN.test(text)) {
    return "Must not contain control characters other than tab and line breaks";
  }
  return null;
}
