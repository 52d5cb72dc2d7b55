import { constants, crc32, deflateRawSync } from "node:zlib";

/**
 * The beginning of an answer compressed once and kept: its raw deflate blocks, ended on a byte boundary by a sync
 * flush (no final block), with the CRC-32 and length of the text they hold.
 */
export interface GzipHead {
  deflated: Uint8Array;
  crc: number;
  length: number;
}

/** Compresses `head` once, to be completed by `gzipAnswer` with each answer's own tail. */
export function gzipHead(head: Uint8Array): GzipHead {
  return {
    deflated: deflateRawSync(head, { finishFlush: constants.Z_SYNC_FLUSH }),
    crc: crc32(head),
    length: head.length,
  };
}

/** gzip's member header: deflate, no name, no time, unknown system (RFC 1952 §2.3). */
const HEADER = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff);
/** A stored block holds at most this many bytes (RFC 1951 §3.2.4). */
const STORED_MAX = 0xffff;

/**
 * One gzip member (RFC 1952) of `head`'s text followed by `tail`: the kept deflate blocks, then `tail` in stored
 * (uncompressed) blocks, the last one final, then the CRC-32 and length of the whole text. Any gzip decoder reads it
 * as one ordinary member; only the tail (a few hundred bytes: the answer's `meta`) is written per answer.
 */
export function gzipAnswer(head: GzipHead, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const blocks = Math.max(1, Math.ceil(tail.length / STORED_MAX));
  const out = new Uint8Array(HEADER.length + head.deflated.length + blocks * 5 + tail.length + 8);
  const view = new DataView(out.buffer);
  out.set(HEADER);
  out.set(head.deflated, HEADER.length);
  let at = HEADER.length + head.deflated.length;
  for (let block = 0; block < blocks; block++) {
    const part = tail.subarray(block * STORED_MAX, (block + 1) * STORED_MAX);
    out[at] = block === blocks - 1 ? 1 : 0; // BFINAL on the last; BTYPE 00 (stored); the rest of the byte is padding
    view.setUint16(at + 1, part.length, true);
    view.setUint16(at + 3, ~part.length & 0xffff, true);
    out.set(part, at + 5);
    at += 5 + part.length;
  }
  view.setUint32(at, crc32(tail, head.crc) >>> 0, true);
  view.setUint32(at + 4, (head.length + tail.length) >>> 0, true);
  return out;
}

/**
 * Whether an `Accept-Encoding` header accepts gzip (RFC 9110 §12.5.3): `gzip` (or `x-gzip`) with a non-zero weight,
 * or `*` with one when gzip is not named. No header, or gzip refused, is the identity.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const accepted = Number.isFinite(weight) && weight > 0;
    if (name === "gzip" || name === "x-gzip") return accepted;
    if (name === "*") star = accepted;
  }
  return star;
}

/**
 * The `Accept-Encoding` the client itself sent. On Cloudflare (and under `wrangler dev`, which does the same) the
 * Worker's request carries a normalized `Accept-Encoding` (`br, gzip`, whatever the client sent, none included) and
 * the client's own header as `request.cf.clientAcceptEncoding` (`""` when it sent none); elsewhere (tests, direct
 * sockets) the header is the client's.
 */
export function clientAcceptEncoding(request: Request): string | undefined {
  const cf = (request as { cf?: { clientAcceptEncoding?: unknown } }).cf;
  if (typeof cf?.clientAcceptEncoding === "string") return cf.clientAcceptEncoding;
  return request.headers.get("accept-encoding") ?? undefined;
}
