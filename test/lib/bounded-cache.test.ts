import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../src/lib/bounded-cache.ts";

describe("BoundedCache", () => {
  it("keeps entries up to its total length, dropping the least recently used first", () => {
    const cache = new BoundedCache<string>(10, (text) => text.length);
    cache.set("a", "aaaa");
    cache.set("b", "bbbb");
    expect(cache.get("a")).toBe("aaaa"); // a is now the most recently used
    cache.set("c", "cccc"); // 12 > 10: b goes
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe("aaaa");
    expect(cache.get("c")).toBe("cccc");
    expect(cache.chars).toBe(8);
  });

  it("replaces an entry, counting its new length only", () => {
    const cache = new BoundedCache<string>(10, (text) => text.length);
    cache.set("a", "aaaa");
    cache.set("a", "aaaaaaaa");
    expect(cache.get("a")).toBe("aaaaaaaa");
    expect(cache.chars).toBe(8);
  });

  it("never keeps an entry longer than the bound, and drops what it replaced", () => {
    const cache = new BoundedCache<string>(4, (text) => text.length);
    cache.set("a", "aa");
    cache.set("a", "aaaaa");
    expect(cache.get("a")).toBeUndefined();
    expect(cache.chars).toBe(0);
  });

  it("clear drops every entry and its length", () => {
    const cache = new BoundedCache<string>(10, (text) => text.length);
    cache.set("a", "aaaa");
    cache.clear();
    expect(cache.get("a")).toBeUndefined();
    expect(cache.chars).toBe(0);
    cache.set("b", "bbbbbbbbbb"); // the whole bound is free again
    expect(cache.get("b")).toBe("bbbbbbbbbb");
  });
});
