/**
 * Free text we store and show (names, descriptions, guidance): well-formed Unicode, and no control characters that
 * a terminal, a log line or an HTML page would act on.
 *
 * - single-line text (`name`, `categories[]`, a paywall's `name`): no control character at all (C0, DEL, C1), no
 *   Unicode line or paragraph separator (U+2028, U+2029), and no bidirectional embedding, override or isolate control
 *   (U+202A–U+202E, U+2066–U+2069), which reorder what follows them on screen: a name could show another name
 *   ("Trojan Source");
 * - multi-line text (`description`, `xGuidance`): the same, but TAB, LF and CR are allowed.
 */

/** Controls, separators, and the bidirectional controls LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI. */
const SINGLE_LINE_FORBIDDEN = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const MULTI_LINE_FORBIDDEN = /(?![\t\n\r])[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

export type TextKind = "single-line" | "multi-line";

/** Why a text is refused, or `null`. */
export function textProblem(text: string, kind: TextKind): string | null {
  if (!text.isWellFormed()) return "Must be well-formed Unicode";
  if (kind === "single-line" && SINGLE_LINE_FORBIDDEN.test(text)) {
    return "Must not contain control characters, line separators or bidirectional controls";
  }
  if (kind === "multi-line" && MULTI_LINE_FORBIDDEN.test(text)) {
    return "Must not contain control characters other than tab and line breaks, line separators or bidirectional controls";
  }
  return null;
}
