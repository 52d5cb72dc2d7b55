/**
 * Tenant text inside documents the platform writes in Markdown (llms.txt, the descriptions of an OpenAPI document,
 * which are CommonMark): made inert, so it reads as the tenant wrote it but cannot act as Markdown or HTML.
 *
 * - A link or image whose target is an absolute `http(s)` URL stays a link: `[text](https://…)`.
 * - Every other `[`, `]`, `<` and `\` is escaped with a backslash: no other link, image, reference definition,
 *   autolink (`<javascript:…>`) or HTML tag can form, whatever its scheme or its spelling (entities, nesting).
 * - A `javascript:`, `vbscript:`, `data:`, `file:` or `blob:` URL is dropped from the text, link or not, any case.
 */

/** An http(s) link or image (kept), or a character that could start any other construct (escaped). */
const TOKEN = /!?\[[^[\]\\<>\n]*\]\(https?:\/\/[^\s()<>\\]+\)|[[\]<\\]/gi;
/** A URL of a scheme that runs or embeds content, up to the next blank or bracket. */
const ACTIVE_URL = /\b(?:javascript|vbscript|data|file|blob)\s*:[^\s()<>[\]]*/gi;

export function inertMarkdown(text: string): string {
  return text.replace(ACTIVE_URL, "").replace(TOKEN, (match) => (match.length > 1 ? match : `\\${match}`));
}

/**
 * Multi-line tenant text as a Markdown blockquote: every line (CRLF, CR and LF alike) starts with `> `, a line's own
 * leading `#` or `>` is escaped, and the text is inert (`inertMarkdown`). No line of it can read as a heading, a list
 * item or any other line of the document around it.
 */
export function quotedMarkdown(text: string): string {
  return inertMarkdown(text.trim())
    .split(/\r\n|\r|\n/)
    .map((line) => {
      const escaped = line.trimEnd().replace(/^(\s*)([#>])/, "$1\\$2");
      return escaped === "" ? ">" : `> ${escaped}`;
    })
    .join("\n");
}
