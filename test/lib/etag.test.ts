import { describe, expect, it } from "vitest";
import { etagOf, ifMatchVersions, listEtagOf, noneMatchesTag, noneMatchHits, weakEtagOf } from "../../src/lib/etag.ts";

describe("etagOf", () => {
  it("is a strong quoted tag of the version", () => {
    expect(etagOf(1)).toBe('"v1"');
    expect(etagOf(42)).toBe('"v42"');
  });
});

describe("weakEtagOf", () => {
  it("is the tag's weak form, which If-None-Match compares equal to the strong one", () => {
    expect(weakEtagOf('"l0a"')).toBe('W/"l0a"');
    expect(noneMatchesTag(weakEtagOf('"l0a"'), '"l0a"')).toBe(true);
  });
});

describe("ifMatchVersions", () => {
  it("absent or * → no condition", () => {
    expect(ifMatchVersions(undefined)).toBeUndefined();
    expect(ifMatchVersions("*")).toBeUndefined();
    expect(ifMatchVersions(" * ")).toBeUndefined();
  });

  it("reads one tag or a list of strong tags", () => {
    expect(ifMatchVersions('"v3"')).toEqual([3]);
    expect(ifMatchVersions('"v3", "v7" ,"v12"')).toEqual([3, 7, 12]);
  });

  it("an empty header is a malformed one: it matches nothing (412), it is never 'no condition'", () => {
    for (const header of ["", " ", "  ", "\t", ",", " , "]) expect(ifMatchVersions(header), JSON.stringify(header)).toEqual([]);
  });

  it("weak, malformed or foreign tags match nothing (the write is refused with 412)", () => {
    expect(ifMatchVersions('W/"v3"')).toEqual([]);
    expect(ifMatchVersions("v3")).toEqual([]);
    expect(ifMatchVersions('"3"')).toEqual([]);
    expect(ifMatchVersions('"v0"')).toEqual([]);
    expect(ifMatchVersions('"v03"')).toEqual([]);
    expect(ifMatchVersions('"v1e3"')).toEqual([]);
    expect(ifMatchVersions('"v99999999999999999999"')).toEqual([]);
    expect(ifMatchVersions('W/"v3", "v4"')).toEqual([4]);
  });
});

describe("noneMatchHits", () => {
  it("matches the current version, weakly, in a list, or *", () => {
    expect(noneMatchHits('"v3"', 3)).toBe(true);
    expect(noneMatchHits('W/"v3"', 3)).toBe(true);
    expect(noneMatchHits('"v1", "v3"', 3)).toBe(true);
    expect(noneMatchHits("*", 3)).toBe(true);
  });

  it("misses an older version, junk, or no header", () => {
    expect(noneMatchHits('"v2"', 3)).toBe(false);
    expect(noneMatchHits("v3", 3)).toBe(false);
    expect(noneMatchHits(undefined, 3)).toBe(false);
  });
});

describe("listEtagOf", () => {
  it("is a strong quoted tag of the state's hash, the same for the same state, another for any other", async () => {
    const tag = await listEtagOf("2;svc_a:3,svc_b:1");
    expect(tag).toMatch(/^"l[0-9a-f]{32}"$/);
    expect(await listEtagOf("2;svc_a:3,svc_b:1")).toBe(tag);
    expect(await listEtagOf("2;svc_a:4,svc_b:1")).not.toBe(tag);
    expect(await listEtagOf("")).not.toBe(tag);
  });

  it("is never an item's tag: If-Match cannot take it", async () => {
    expect(ifMatchVersions(await listEtagOf("x"))).toEqual([]);
  });
});

describe("noneMatchesTag", () => {
  const tag = '"l0123456789abcdef0123456789abcdef"';
  it("matches the tag, weakly, in a list, or *", () => {
    expect(noneMatchesTag(tag, tag)).toBe(true);
    expect(noneMatchesTag(`W/${tag}`, tag)).toBe(true);
    expect(noneMatchesTag(`"v1", ${tag}`, tag)).toBe(true);
    expect(noneMatchesTag("*", tag)).toBe(true);
  });

  it("misses another tag, the tag unquoted, junk, or no header", () => {
    expect(noneMatchesTag('"l0123456789abcdef0123456789abcdee"', tag)).toBe(false);
    expect(noneMatchesTag(tag.slice(1, -1), tag)).toBe(false);
    expect(noneMatchesTag("", tag)).toBe(false);
    expect(noneMatchesTag(undefined, tag)).toBe(false);
  });
});
