/**
 * A least-recently-used map bounded by its entries' total length, as `lengthOf` measures it (a text's UTF-16 code
 * units, a page's bytes, or 1 per entry for a bound on their number): an entry longer than the bound is never kept,
 * and the oldest entries go first to make room.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  private size = 0;
  private readonly maxLength: number;
  private readonly lengthOf: (value: V) => number;
  constructor(maxLength: number, lengthOf: (value: V) => number) {
    this.maxLength = maxLength;
    this.lengthOf = lengthOf;
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
    const length = this.lengthOf(value);
    if (length > this.maxLength) return;
    for (const [oldest, old] of this.entries) {
      if (this.size + length <= this.maxLength) break;
      this.entries.delete(oldest);
      this.size -= this.lengthOf(old);
    }
    this.entries.set(key, value);
    this.size += length;
  }

  delete(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.size -= this.lengthOf(old);
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
    this.size = 0;
  }

  /** The entries' total length. */
  get chars(): number {
    return this.size;
  }
}
