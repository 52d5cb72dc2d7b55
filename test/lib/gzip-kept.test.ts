import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { acceptsGzip, clientAcceptEncoding, gzipAnswer, gzipHead } from "../../src/lib/gzip-kept.ts";

const utf8 = new TextEncoder();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The text a standard gzip decoder reads: workerd's own DecompressionStream, as a browser or fetch would. */
async function gunzipStream(bytes: Uint8Array): Promise<string> {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

describe("gzipAnswer", () => {
  const head = utf8.encode(
    `{"data":${JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: `svc_${i}`, é: "ü" })))},"meta":`,
  );
  const kept = gzipHead(head);

  it("is one gzip member that decodes to the head followed by the tail, through zlib and DecompressionStream", async () => {
    for (const tail of ['{"request_id":"req_1"}}', '{"request_id":"req_2","x":"ß"}}']) {
      const gz = gzipAnswer(kept, utf8.encode(tail));
      const whole = text(head) + tail;
      expect(text(gunzipSync(gz))).toBe(whole);
      expect(await gunzipStream(gz)).toBe(whole);
    }
  });

  it("keeps the head compressed: the answer is far smaller than its text", () => {
    const gz = gzipAnswer(kept, utf8.encode("{}}"));
    expect(gz.length).toBeLessThan(head.length / 5);
    expect([...gz.subarray(0, 3)]).toEqual([0x1f, 0x8b, 8]);
  });

  it("splits a tail longer than one stored block, and takes an empty tail or head", async () => {
    const long = "x".repeat(70_000 * 2 + 7);
    expect(await gunzipStream(gzipAnswer(kept, utf8.encode(long)))).toBe(text(head) + long);
    expect(text(gunzipSync(gzipAnswer(kept, new Uint8Array())))).toBe(text(head));
    expect(text(gunzipSync(gzipAnswer(gzipHead(new Uint8Array()), utf8.encode("{}"))))).toBe("{}");
  });

  it("names the whole text in its trailer: a CRC of the tail alone is refused by the decoder", () => {
    const gz = gzipAnswer(kept, utf8.encode("{}}"));
    const broken = gzipAnswer({ ...kept, crc: 0 }, utf8.encode("{}}"));
    expect(() => gunzipSync(gz)).not.toThrow();
    expect(() => gunzipSync(broken)).toThrow();
  });
});

describe("acceptsGzip", () => {
  it.each([
    ["gzip", true],
    ["gzip, deflate, br", true],
    ["br;q=1.0, GZIP;q=0.5", true],
    ["x-gzip", true],
    ["*", true],
    ["br, *;q=0.1", true],
    [undefined, false],
    ["", false],
    ["identity", false],
    ["br, deflate", false],
    ["gzip;q=0", false],
    ["gzip;q=0.000, *", false],
    ["*;q=0", false],
  ])("%j → %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe("clientAcceptEncoding", () => {
  const request = (headers: Record<string, string>, cf?: Record<string, unknown>) =>
    new Request("https://api.test/v1/services", { headers, ...(cf ? { cf } : {}) });

  it("is the client's own header from cf when the edge normalized the request's (none sent: empty)", () => {
    expect(clientAcceptEncoding(request({ "accept-encoding": "br, gzip" }, { clientAcceptEncoding: "" }))).toBe("");
    expect(clientAcceptEncoding(request({ "accept-encoding": "br, gzip" }, { clientAcceptEncoding: "identity" }))).toBe(
      "identity",
    );
    expect(clientAcceptEncoding(request({ "accept-encoding": "br, gzip" }, { clientAcceptEncoding: "gzip, deflate" }))).toBe(
      "gzip, deflate",
    );
  });

  it("is the request's header where no edge stands in front (tests, direct sockets)", () => {
    expect(clientAcceptEncoding(request({ "accept-encoding": "gzip" }))).toBe("gzip");
    expect(clientAcceptEncoding(request({}))).toBeUndefined();
    expect(clientAcceptEncoding(request({ "accept-encoding": "gzip" }, { country: "DE" }))).toBe("gzip");
  });
});
