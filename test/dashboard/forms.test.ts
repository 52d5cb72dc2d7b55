import { describe, expect, it } from "vitest";
import { plainWords } from "../../src/dashboard/forms.tsx";
import { csvField } from "../../src/dashboard/pages/earnings/csv.ts";

describe("plainWords", () => {
  it("says the schema library's generic messages in plain words, and leaves the rules' own messages alone", () => {
    expect(plainWords("Too small: expected string to have >=1 characters")).toBe("Required");
    expect(plainWords("Too small: expected array to have >=1 items")).toBe("Choose at least one");
    expect(plainWords("Too big: expected string to have <=100 characters")).toBe("At most 100 characters");
    expect(plainWords('Invalid option: expected one of "testnet"|"mainnet"')).toBe("Choose one of the options");
    expect(plainWords("Must be an absolute URL")).toBe("Must be an absolute URL");
  });
});

describe("csvField", () => {
  it("quotes what needs quoting and neutralises what a spreadsheet would run as a formula", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField(null)).toBe("");
    expect(csvField('a "b", c')).toBe('"a ""b"", c"');
    expect(csvField("line\nbreak")).toBe('"line\nbreak"');
    for (const lead of ["=", "+", "-", "@", "\t", "\r"])
      expect(csvField(`${lead}1+1`).startsWith(`'${lead}`) || csvField(`${lead}1+1`).startsWith(`"'${lead}`)).toBe(true);
    expect(csvField("0.010000")).toBe("0.010000");
  });
});
