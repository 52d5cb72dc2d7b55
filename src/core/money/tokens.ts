/**
 * Which networks a history filter names, and amounts per network added up per token: the dashboard's revenue totals
 * and chart read the per-network roll-ups (`daily_revenue`) through these. Amounts of two tokens (USDC, Tempo
 * testnet's pathUSD) are never added together.
 */
import type { DayRevenue, DayStats, DayTraffic } from "../../db/daily-stats.ts";
import type { Token } from "../../db/schema.ts";
import { NETWORK_TABLE } from "./network-table.ts";
import { NETWORK_IDS, type NetworkId } from "./networks.ts";

export type Protocol = "x402" | "mpp";

/** The payment standard a network takes: MPP on Tempo, x402 on every EVM network. */
export const protocolOf = (network: NetworkId): Protocol => (NETWORK_TABLE[network].kind === "tempo" ? "mpp" : "x402");

/** The networks a filter names (a network, a protocol, both or neither: then all), in the network table's order. */
export function networksMatching(filter: { network?: string | undefined; protocol?: Protocol | undefined }): NetworkId[] {
  return NETWORK_IDS.filter(
    (n) => (!filter.network || n === filter.network) && (!filter.protocol || protocolOf(n) === filter.protocol),
  );
}

/**
 * Per network (code-point order), the days' revenue since each date of `since`: `sums[i]` adds the days on or after
 * `since[i]` (integer micro-units, as text, every digit kept).
 */
export function sumsSince(rows: readonly DayRevenue[], since: readonly string[]): { network: string; sums: string[] }[] {
  const perNetwork = new Map<string, bigint[]>();
  for (const r of rows) {
    const sums = perNetwork.get(r.network) ?? since.map(() => 0n);
    perNetwork.set(r.network, sums);
    for (const [i, day] of since.entries()) if (r.day >= day) sums[i] = (sums[i] as bigint) + BigInt(r.amount);
  }
  return [...perNetwork].sort(([a], [b]) => (a < b ? -1 : 1)).map(([network, sums]) => ({ network, sums: sums.map(String) }));
}

/** Per-network sums (integer micro-units, as text) added up per token, tokens in code-point order (USDC before pathUSD). */
export function sumsPerToken(
  rows: readonly { network: string; sums: readonly string[] }[],
): { currency: Token; sums: string[] }[] {
  const totals = new Map<Token, bigint[]>();
  for (const row of rows) {
    const entry = NETWORK_TABLE[row.network as NetworkId];
    if (!entry) continue;
    const acc = totals.get(entry.token) ?? row.sums.map(() => 0n);
    totals.set(
      entry.token,
      acc.map((a, i) => a + BigInt(row.sums[i] ?? "0")),
    );
  }
  return [...totals.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, sums]) => ({ currency, sums: sums.map(String) }));
}

/**
 * The token a revenue chart draws: of the per-token totals, the one with the most revenue in the window `at`
 * (`sums[at]`), USDC when none has any. One chart, one token: two tokens are never drawn as one number.
 */
export function chartToken(totals: readonly { currency: Token; sums: readonly string[] }[], at: number): Token {
  let best: { currency: Token; sum: bigint } = { currency: "USDC", sum: 0n };
  for (const t of totals) {
    const sum = BigInt(t.sums[at] ?? "0");
    if (sum > best.sum) best = { currency: t.currency, sum };
  }
  return best.currency;
}

/** Each day's revenue in `token`: the day's amounts on that token's networks, added (text, every digit kept). */
export function revenueInToken(
  rows: readonly { day: string; network: string; amount: string }[],
  token: Token,
): Map<string, string> {
  const byDay = new Map<string, bigint>();
  for (const r of rows) {
    if (NETWORK_TABLE[r.network as NetworkId]?.token !== token) continue;
    byDay.set(r.day, (byDay.get(r.day) ?? 0n) + BigInt(r.amount));
  }
  return new Map([...byDay].map(([day, sum]) => [day, String(sum)]));
}

/** The days' traffic with each day's revenue in `token` ("0" on a day without any): what the earnings charts draw. */
export function daysInToken(traffic: readonly DayTraffic[], rows: readonly DayRevenue[], token: Token): DayStats[] {
  const perDay = revenueInToken(rows, token);
  return traffic.map((d) => ({ ...d, revenue: perDay.get(d.day) ?? "0" }));
}
