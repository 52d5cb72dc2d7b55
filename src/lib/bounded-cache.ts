/**
 * A least-recently-used map bounded by its entries' total `length` (a string's UTF-16 code units, a byte array's
 * bytes, or an entry's own count): an entry longer than the bound is never kept, and the oldest entries go first to
 * make room.
 */
export class BoundedCache<V extends { readonly length: number }> {
  private readonly entries = new Map<string, V>();
  private size = 0;
  private readonly maxLength: number;
  constructor(maxLength: number) {
    this.maxLength = maxLength;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key); // re-inserted last: the most recently used
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    if (value.length > this.maxLength) return;
    for (const [oldest, old] of this.entries) {
      if (this.size + value.length <= this.maxLength) break;
      this.entries.delete(oldest);
      this.size -= old.length;
    }
    this.entries.set(key, value);
    this.size += value.length;
  }

  delete(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.size -= old.length;
  }

  /** The entries' total length. */
  get chars(): number {
    return this.size;
  }
}
