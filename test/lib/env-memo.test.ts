// The gateway's per-isolate memo of what a payment challenge is built from: one value per env object and name,
// built once, the least recently used dropped past its limit.
import { describe, expect, it } from "vitest";
import { EnvMemo } from "../../src/lib/env-memo.ts";

describe("EnvMemo", () => {
  it("builds once per env and name; another env object has its own values", () => {
    const memo = new EnvMemo<number>(10);
    const env = {};
    let built = 0;
    const build = () => ++built;
    expect(memo.get(env, "a", build)).toBe(1);
    expect(memo.get(env, "a", build)).toBe(1);
    expect(memo.get({}, "a", build)).toBe(2);
    expect(memo.get(env, "b", build)).toBe(3);
  });

  it("drops the least recently used name past its limit, and a value only when it is still the one kept", () => {
    const memo = new EnvMemo<string>(2);
    const env = {};
    memo.get(env, "a", () => "a1");
    memo.get(env, "b", () => "b1");
    memo.get(env, "a", () => "unused"); // a is the most recently used now
    memo.get(env, "c", () => "c1"); // b goes
    expect(memo.get(env, "b", () => "b2")).toBe("b2");
    expect(memo.get(env, "a", () => "a2")).toBe("a2"); // a went when b came back
    // A failed build's cleanup removes its own value only, never one built since.
    memo.delete(env, "a", "a1");
    expect(memo.get(env, "a", () => "a3")).toBe("a2");
    memo.delete(env, "a", "a2");
    expect(memo.get(env, "a", () => "a4")).toBe("a4");
  });
});
