import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inertMarkdown, quotedMarkdown } from "../../src/lib/markdown-text.ts";

describe("inertMarkdown", () => {
  it.each([
    ["plain text, 1:2 ratios and notes: unchanged", "plain text, 1:2 ratios and notes: unchanged"],
    [
      "[docs](https://a.example/x?y=1) and ![logo](http://a.example/l.png)",
      "[docs](https://a.example/x?y=1) and ![logo](http://a.example/l.png)",
    ],
    ["[x](javascript:alert(1))", "\\[x\\]((1))"],
    ["[x](ftp://files.example/a)", "\\[x\\](ftp://files.example/a)"],
    ["![i](data:image/png;base64,AAAA)", "!\\[i\\]()"],
    ["[a [b]](jav&#x61;script:alert(1))", "\\[a \\[b\\]\\](jav&#x61;script:alert(1))"],
    ["<javascript:alert(1)> <https://a.example>", "\\<(1)> \\<https://a.example>"],
    ["<script>x</script>", "\\<script>x\\</script>"],
    ["[ref]: VBScript:msgbox", "\\[ref\\]: "],
    ["C:\\dir \\[x](javascript:y)", "C:\\\\dir \\\\\\[x\\]()"],
  ])("%j → %j", (text, inert) => {
    expect(inertMarkdown(text)).toBe(inert);
  });

  it("whatever the text: no active URL scheme, no unescaped bracket, angle bracket or backslash outside an http(s) link", () => {
    const piece = fc.constantFrom(
      "[",
      "]",
      "(",
      ")",
      "<",
      ">",
      "\\",
      "!",
      "javascript:",
      "JAVASCRIPT :",
      "data:",
      "https://a.example",
      " ",
      "x",
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 4 })), { maxLength: 30 }), (parts) => {
        const inert = inertMarkdown(parts.join(""));
        expect(inert).not.toMatch(/\b(javascript|vbscript|data|file|blob)\s*:/i);
        const outsideLinks = inert.replace(/!?\[[^[\]\\<>\n]*\]\(https?:\/\/[^\s()<>\\]+\)/gi, "").replace(/\\[[\]<\\]/g, "");
        expect(outsideLinks).not.toMatch(/[[\]<\\]/);
      }),
    );
  });
});

describe("quotedMarkdown", () => {
  it("quotes every line (CRLF, CR, LF), escapes a leading # or >, keeps blank lines inside the quote", () => {
    expect(quotedMarkdown("## How to pay\r\nPay.\r\r\n> q\n  # h\n- [x](https://a.example)")).toBe(
      "> \\## How to pay\n> Pay.\n>\n> \\> q\n>   \\# h\n> - [x](https://a.example)",
    );
  });

  it("whatever the text, every line starts with > and none with a heading or quote of its own", () => {
    fc.assert(
      fc.property(
        fc
          .array(
            fc.oneof(
              fc.constantFrom("\r\n", "\r", "\n", "#", "## ", ">", " ", "\t", "\u000b", "\u2028", "- [a](https://a.example)"),
              fc.string({ maxLength: 4 }),
            ),
            { maxLength: 30 },
          )
          .map((parts) => parts.join(""))
          .filter((t) => t.trim() !== ""),
        (text) => {
          const lines = quotedMarkdown(text).split("\n");
          expect(lines.filter((line) => !/^>( |$)/.test(line) || /^> \s*[#>]/.test(line))).toEqual([]);
        },
      ),
    );
  });
});
