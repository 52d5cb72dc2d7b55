const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

export const randomHex = (byteLength: number) => hex(crypto.getRandomValues(new Uint8Array(byteLength)));

/** A resource id: a readable prefix and 96 random bits, e.g. `svc_3f9a0c1d2e4b5a6978c0d1e2`. */
export const newId = (prefix: "ten" | "key" | "svc" | "pw" | "txn" | "evt" | "req" | "aev") => `${prefix}_${randomHex(12)}`;

export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
