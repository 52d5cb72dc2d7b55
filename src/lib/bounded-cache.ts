/**
 * A least-recently-used map of strings bounded by its entries' total length (UTF-16 code units, about bytes for
 * JSON text): an entry longer than the bound is never kept, and the oldest entries go first to make room.
 */
export class BoundedTextCache {
  private readonly entries = new Map<string, string>();
  private size = 0;
  private readonly maxChars: number;
  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key); // re-inserted last: the most recently used
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: string): void {
    this.delete(key);
    if (value.length > this.maxChars) return;
    for (const [oldest, old] of this.entries) {
      if (this.size + value.length <= this.maxChars) break;
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
