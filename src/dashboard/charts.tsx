/**
 * Server-rendered SVG charts of the daily roll-ups: revenue per day (bars, in one token) and requests / successes /
 * errors per day (lines). No JavaScript: each chart is an `<svg role="img">` with a title and a summary (`desc`),
 * a tooltip (`<title>`) on every bar and point, and the same figures as a table. Amounts stay integer micro-USDC
 * (bigint) from the database to the label; only pixel geometry is computed in numbers.
 */

import { formatUsdcAmount, formatUsdcShort } from "../core/money/usdc.ts";
import type { DayStats } from "../db/daily-stats.ts";
import { formatCount as count } from "../lib/digits.ts";

/** The drawing's own coordinate system; the SVG scales to its container. */
const WIDTH = 480;
const HEIGHT = 220;
/** Room above the plot for the unit's label, clear of the top tick's label at a phone's larger text. */
const TOP = 38;
const BOTTOM = 34;
const RIGHT = 14;
const PLOT_HEIGHT = HEIGHT - TOP - BOTTOM;
/** The plot's height and the y of its axis line, in drawing units (for tests). */
export const PLOT = { height: PLOT_HEIGHT, baseline: HEIGHT - BOTTOM };
const FONT = { "font-family": "system-ui, sans-serif", "font-size": 13, fill: "#5b6576" } as const;

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `2026-11-22` → `22 Nov` */
export const shortDay = (day: string) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]}`;

/** The smallest of 1, 2, 5 × 10^k (k ≥ 1) that is ≥ `max` and ≥ `floor`: the top of the axis; its half is a whole number. */
export function niceCeiling(max: bigint, floor: bigint): bigint {
  for (let power = 10n; ; power *= 10n) {
    for (const m of [1n, 2n, 5n]) if (m * power >= max && m * power >= floor) return m * power;
  }
}

/** Pixel height of `value` on an axis whose top is `top` (bigint arithmetic; never below 0). */
export const barHeight = (value: bigint, top: bigint) => (value <= 0n ? 0 : Number((value * BigInt(PLOT_HEIGHT)) / top));

interface Frame {
  left: number;
  slot: number;
  x: (i: number) => number;
  y: (height: number) => number;
}

/**
 * Left margin from the widest axis label, at 10 units a character (text is 13 units, 17 on a phone, where the
 * drawing is scaled down: docs/dashboard.md); one slot per day.
 */
function frame(days: number, labels: string[]): Frame {
  const left = 14 + 10 * Math.max(...labels.map((l) => l.length));
  const slot = (WIDTH - left - RIGHT) / Math.max(days, 1);
  return { left, slot, x: (i) => left + i * slot, y: (h) => TOP + PLOT_HEIGHT - h };
}

/** Horizontal grid lines and labels at 0, half and the top of the axis; the day labels of every 7th day up to the last. */
function Axes({ f, ticks, days, unit }: { f: Frame; ticks: string[]; days: DayStats[]; unit: string }) {
  return (
    <g>
      {ticks.map((label, i) => {
        const y = f.y((PLOT_HEIGHT * i) / (ticks.length - 1));
        return (
          <g>
            <line x1={f.left} x2={WIDTH - RIGHT} y1={y} y2={y} stroke={i === 0 ? "#5b6576" : "#d6dbe3"} stroke-width="1" />
            <text x={f.left - 6} y={y + 4} text-anchor="end" {...FONT}>
              {label}
            </text>
          </g>
        );
      })}
      <text x={4} y={16} {...FONT}>
        {unit}
      </text>
      {days.map((d, i) => {
        if ((days.length - 1 - i) % 7 !== 0) return null;
        // The last label ends at the plot's right edge, so it is never cut off; a label that would reach into the
        // axis labels' column (about 30 units each side of its middle) is left out.
        const last = i === days.length - 1;
        if (!last && f.x(i) + f.slot / 2 - 30 < f.left) return null;
        return (
          <text
            x={last ? WIDTH - RIGHT : f.x(i) + f.slot / 2}
            y={HEIGHT - BOTTOM + 18}
            text-anchor={last ? "end" : "middle"}
            {...FONT}
          >
            {shortDay(d.day)}
          </text>
        );
      })}
    </g>
  );
}

const range = (days: DayStats[]) => (days.length ? `${days[0]!.day} to ${days.at(-1)!.day}` : "no days");

/** One column of a chart's data table: its header and each day's cell. */
interface Column {
  label: string;
  cell: (d: DayStats) => string;
}

/**
 * The frame every chart shares: a captioned figure, the SVG (its marks are `children`) titled and described for
 * screen readers, the summary sentence under it, and the same data as a table for anyone who cannot read the picture.
 */
function Chart(props: {
  id: string;
  title: string;
  summary: string;
  days: DayStats[];
  columns: Column[];
  legend?: unknown;
  children: unknown;
}) {
  const { id, title, summary, days, columns } = props;
  return (
    <figure class="chart" id={id}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      {props.legend}
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        role="img"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-summary`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title>{title}</title>
        <desc>{summary}</desc>
        {props.children}
      </svg>
      <p class="hint" id={`${id}-summary`}>
        {summary}
      </p>
      <details>
        <summary>{title.replace(/ \(.*\)$/, "")} as a table</summary>
        <div class="table-wrap">
          <table>
            <caption class="sr-only">
              {title.replace(/ \(.*\)$/, "")}, {range(days)}
            </caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                {columns.map((col) => (
                  <th scope="col">{col.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <th scope="row">{d.day}</th>
                  {columns.map((col) => (
                    <td>{col.cell(d)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** Revenue per day: one bar per day (none on a day without revenue), each with its exact amount as a tooltip. */
export function RevenueChart({ id, days, token = "USDC" }: { id: string; days: DayStats[]; token?: string }) {
  const values = days.map((d) => BigInt(d.revenue));
  let max = 0n; // bigint: Math.max does not take it
  for (const v of values) if (v > max) max = v;
  const total = values.reduce((a, b) => a + b, 0n);
  const top = niceCeiling(max, 10_000n);
  const ticks = [0n, top / 2n, top].map(formatUsdcShort);
  const f = frame(days.length, ticks);
  const best = days.find((_, i) => values[i] === max);
  const quiet = values.filter((v) => v === 0n).length;
  const summary =
    `Total ${formatUsdcAmount(total)} ${token} from ${range(days)}` +
    (max > 0n && best ? `; highest ${formatUsdcAmount(max)} ${token} on ${best.day}` : "") +
    `; ${quiet} of ${days.length} days without revenue.`;
  const gap = Math.min(4, f.slot / 5);
  return (
    <Chart
      id={id}
      title={`Revenue per day (completed transactions, ${token})`}
      summary={summary}
      days={days}
      columns={[{ label: `Revenue (${token})`, cell: (d) => formatUsdcAmount(d.revenue) }]}
    >
      <Axes f={f} ticks={ticks} days={days} unit={token} />
      {days.map((d, i) => {
        if (values[i]! <= 0n) return null; // an empty day: no bar; the table and the summary list it
        const h = Math.max(barHeight(values[i]!, top), 1);
        return (
          <rect
            class="bar"
            data-day={d.day}
            data-revenue={d.revenue}
            x={(f.x(i) + gap / 2).toFixed(2)}
            y={f.y(h)}
            width={(f.slot - gap).toFixed(2)}
            height={h}
            fill="#1f5fbf"
          >
            <title>{`${d.day}: ${formatUsdcAmount(d.revenue)} ${token}`}</title>
          </rect>
        );
      })}
    </Chart>
  );
}

/** How each traffic series is drawn: colour, dash pattern (so the lines differ without colour too) and label. */
export const SERIES = [
  { key: "requests", label: "Requests", color: "#1f5fbf", dash: undefined },
  { key: "successes", label: "Successes", color: "#146c2e", dash: "7 4" },
  { key: "errors", label: "Errors", color: "#b42318", dash: "2 3" },
] as const;

/** A dot of radius 2.5 at (x, y), as path commands. */
const dot = (x: number, y: number) => `M${(x - 2.5).toFixed(2)} ${y}a2.5 2.5 0 1 0 5 0a2.5 2.5 0 1 0 -5 0`;

/**
 * The series' key, in the page's own text (so it reflows on a phone instead of crowding the drawing): each label
 * beside a sample of its line, colour and dash.
 */
function Legend() {
  return (
    <ul class="legend">
      {SERIES.map((s) => (
        <li>
          <svg width="24" height="8" viewBox="0 0 24 8" aria-hidden="true" focusable="false">
            <line x1="1" x2="23" y1="4" y2="4" stroke={s.color} stroke-width="2.5" stroke-dasharray={s.dash} />
          </svg>
          {s.label}
        </li>
      ))}
    </ul>
  );
}

/** Requests, successes and errors per day: three lines with a point (and tooltip) per day, their legend above. */
export function TrafficChart({ id, days }: { id: string; days: DayStats[] }) {
  const max = Math.max(0, ...days.flatMap((d) => [d.requests, d.successes, d.errors]));
  const top = niceCeiling(BigInt(max), 10n);
  const ticks = [0n, top / 2n, top].map((t) => count(Number(t)));
  const f = frame(days.length, ticks);
  const totals = Object.fromEntries(SERIES.map((s) => [s.key, days.reduce((a, d) => a + d[s.key], 0)]));
  const busiest = days.reduce<DayStats | undefined>((a, d) => (!a || d.requests > a.requests ? d : a), undefined);
  const summary =
    `From ${range(days)}: ${count(totals.requests!)} requests, ${count(totals.successes!)} successes, ${count(totals.errors!)} errors` +
    (busiest && busiest.requests > 0 ? `; busiest day ${busiest.day} with ${count(busiest.requests)} requests.` : ".");
  const cx = (i: number) => f.x(i) + f.slot / 2;
  const cy = (n: number) => f.y(barHeight(BigInt(n), top));
  return (
    <Chart
      id={id}
      title="Requests, successes and errors per day"
      summary={summary}
      days={days}
      columns={SERIES.map((series) => ({ label: series.label, cell: (d: DayStats) => count(d[series.key]) }))}
      legend={<Legend />}
    >
      <Axes f={f} ticks={ticks} days={days} unit="per day" />
      {SERIES.map((s) => (
        <g class={`series ${s.key}`}>
          <polyline
            points={days.map((d, i) => `${cx(i).toFixed(2)},${cy(d[s.key])}`).join(" ")}
            fill="none"
            stroke={s.color}
            stroke-width="2"
            stroke-dasharray={s.dash}
            stroke-linejoin="round"
          />
          {/* A dot per day, all in one path (one element per series keeps the page light). */}
          <path d={days.map((d, i) => dot(cx(i), cy(d[s.key]))).join("")} fill={s.color} />
        </g>
      ))}
      {/* A column per day over the whole plot: its tooltip gives the day's three figures. */}
      {days.map((d, i) => (
        <rect
          class="day"
          x={f.x(i).toFixed(2)}
          y={TOP}
          width={f.slot.toFixed(2)}
          height={PLOT_HEIGHT}
          fill="transparent"
          data-day={d.day}
        >
          <title>{`${d.day}: ${count(d.requests)} requests, ${count(d.successes)} successes, ${count(d.errors)} errors`}</title>
        </rect>
      ))}
    </Chart>
  );
}
