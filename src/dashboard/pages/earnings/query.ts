/** What the earnings page is asked: the API's history filters in form shapes, parsed from the query string. */
import { z } from "zod";
import { NETWORK_IDS } from "../../../core/money/networks.ts";
import { PROTOCOLS, TRANSACTION_STATUSES } from "../../../db/schema.ts";

/** A form field left empty means "any". */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());
const Day = z.iso.date("a date as YYYY-MM-DD");
const PageNumber = z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(1).max(10_000).default(1));

/** The page's query: the API's history filters in form shapes (dates as UTC days, both ends included). */
export const EarningsQuerySchema = z
  .object({
    status: optional(z.enum(TRANSACTION_STATUSES)),
    network: optional(z.enum(NETWORK_IDS)),
    protocol: optional(z.enum(PROTOCOLS)),
    paywall: optional(z.string().max(64)),
    service: optional(z.string().max(64)),
    from: optional(Day),
    to: optional(Day),
    payment: optional(
      z
        .string()
        .trim()
        .regex(
          /^(txn_[a-z0-9_]{1,60}|0x[0-9a-fA-F]{64})$/,
          "a transaction id (txn_…) or a transaction hash (0x… , 64 hex digits)",
        ),
    ),
    tpage: PageNumber,
    epage: PageNumber,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: "must not be after to", path: ["from"] });

export type EarningsQuery = z.output<typeof EarningsQuerySchema>;

/** The query parsed, or the problems in words and the filters as typed (text only; never trusted) to show again. */
export type ParsedEarningsQuery =
  | { ok: true; query: EarningsQuery }
  | { ok: false; problems: string; typed: Partial<EarningsQuery> };

export function parseEarningsQuery(query: Record<string, string>): ParsedEarningsQuery {
  const parsed = EarningsQuerySchema.safeParse(query);
  if (parsed.success) return { ok: true, query: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ");
  return { ok: false, problems, typed: typedFilters(query) };
}

/** The filters as typed, for the form to show them again when they are refused. */
const typedFilters = (query: Record<string, string>): Partial<EarningsQuery> =>
  Object.fromEntries(
    Object.entries(query).filter(([k, v]) => k in EarningsQuerySchema.shape && k !== "tpage" && k !== "epage" && v.length <= 100),
  ) as Partial<EarningsQuery>;

/** A link to the page with the same filters and one value changed. */
export function hrefWith(q: EarningsQuery, change: Partial<Record<keyof EarningsQuery, string | number | undefined>>) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, ...change })) {
    if (v !== undefined && v !== "" && !((k === "tpage" || k === "epage") && v === 1)) params.set(k, String(v));
  }
  const s = params.toString();
  return `/dashboard/earnings${s ? `?${s}` : ""}`;
}

/** The CSV export of the list with the same filters. */
export function csvHref(q: EarningsQuery) {
  const href = hrefWith(q, { tpage: 1, epage: 1 });
  return href.replace("/dashboard/earnings", "/dashboard/earnings/transactions.csv");
}
