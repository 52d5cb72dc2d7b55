import { describe, expect, it } from "vitest";
import { missingSecretLines } from "../../src/lib/dev-vars.ts";

const secrets = { ENCRYPTION_KEY: () => "k1:new", SESSION_AUTHORIZER_KEY: () => "0xnew" };

describe("missingSecretLines", () => {
  it("adds every secret to an empty file, in order", () => {
    expect(missingSecretLines("", secrets)).toEqual(["ENCRYPTION_KEY=k1:new", "SESSION_AUTHORIZER_KEY=0xnew"]);
  });

  it("keeps a secret already set, and adds only the missing one", () => {
    const text = "# local\nENCRYPTION_KEY=k1:old\n";
    expect(missingSecretLines(text, secrets)).toEqual(["SESSION_AUTHORIZER_KEY=0xnew"]);
    expect(missingSecretLines(`${text} SESSION_AUTHORIZER_KEY = 0xold\n`, secrets)).toEqual([]);
  });

  it("does not take a commented-out or longer name for the secret", () => {
    expect(missingSecretLines("# ENCRYPTION_KEY=x\nENCRYPTION_KEY_OLD=y\n", { ENCRYPTION_KEY: () => "k1:new" })).toEqual([
      "ENCRYPTION_KEY=k1:new",
    ]);
  });
});
