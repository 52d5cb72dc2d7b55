// Cron expressions as Cloudflare's Cron Triggers read them (five fields, UTC): minute, hour, day of month, month, day
// of week. Enough for the dev runner to run wrangler.toml's crons on their schedule: `*`, numbers, ranges `a-b`,
// steps `*/n` and `a-b/n`, and lists of these; month and weekday names (`JAN`, `MON`) too. When both the day of month
// and the day of week are restricted, either matching is enough (as cron does).

const FIELDS = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] },
  { min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
] as const;

export interface CronSchedule {
  minutes: Set<number>;
  hours: Set<number>;
  daysOfMonth: Set<number>;
  months: Set<number>;
  /** 0 (Sunday) to 6; 7 is read as 0. */
  daysOfWeek: Set<number>;
  /** Whether the day of month and the day of week were each restricted (not `*`). */
  domRestricted: boolean;
  dowRestricted: boolean;
}

/** A cron expression read, or an `Error` naming what is wrong with it. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron "${expression}": expected 5 fields, got ${parts.length}`);
  const sets = parts.map((part, i) => parseField(part, FIELDS[i] as (typeof FIELDS)[number], expression));
  const daysOfWeek = new Set([...(sets[4] as Set<number>)].map((d) => d % 7));
  return {
    minutes: sets[0] as Set<number>,
    hours: sets[1] as Set<number>,
    daysOfMonth: sets[2] as Set<number>,
    months: sets[3] as Set<number>,
    daysOfWeek,
    domRestricted: parts[2] !== "*",
    dowRestricted: parts[4] !== "*",
  };
}

function parseField(field: string, range: (typeof FIELDS)[number], expression: string): Set<number> {
  const values = new Set<number>();
  const bad = () => new Error(`cron "${expression}": "${field}" is not a value from ${range.min} to ${range.max}`);
  const value = (text: string) => {
    const named = "names" in range ? (range.names as readonly string[]).indexOf(text.toUpperCase()) : -1;
    const n = named >= 0 ? named + range.min : /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isInteger(n) || n < range.min || n > range.max) throw bad();
    return n;
  };
  for (const item of field.split(",")) {
    const [span, stepText, extra] = item.split("/");
    if (span === undefined || extra !== undefined) throw bad();
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) ? Number(stepText) : 0;
    if (step < 1) throw bad();
    let from: number;
    let to: number;
    if (span === "*") [from, to] = [range.min, range.max];
    else if (span.includes("-")) {
      const [a, b, more] = span.split("-");
      if (a === undefined || b === undefined || more !== undefined) throw bad();
      [from, to] = [value(a), value(b)];
      if (from > to) throw bad();
    } else {
      from = value(span);
      to = stepText === undefined ? from : range.max;
    }
    for (let n = from; n <= to; n += step) values.add(n);
  }
  return values;
}

/** Whether the schedule fires in the minute of `at` (UTC). */
export function cronMatches(schedule: CronSchedule, at: Date): boolean {
  if (!schedule.minutes.has(at.getUTCMinutes()) || !schedule.hours.has(at.getUTCHours())) return false;
  if (!schedule.months.has(at.getUTCMonth() + 1)) return false;
  const dom = schedule.daysOfMonth.has(at.getUTCDate());
  const dow = schedule.daysOfWeek.has(at.getUTCDay());
  // Both restricted: either is enough (cron's rule); else the unrestricted one matches every day.
  if (schedule.domRestricted && schedule.dowRestricted) return dom || dow;
  return dom && dow;
}
