const DAY_MS = 86_400_000;

/** The UTC date of an instant, `YYYY-MM-DD` (the `day` of the daily roll-ups). */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** The `count` UTC dates ending with the day of `now`, oldest first. */
export function lastUtcDays(now: Date, count: number): string[] {
  const today = Math.floor(now.getTime() / DAY_MS);
  return Array.from({ length: count }, (_, i) => utcDay(new Date((today - count + 1 + i) * DAY_MS)));
}
