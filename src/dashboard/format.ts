/** How the dashboard writes dates: UTC, minute precision, e.g. `2026-11-22 23:15 UTC`. */
export const formatDate = (d: Date | string | null) => {
  if (d === null) return null;
  const iso = (typeof d === "string" ? new Date(d) : d).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
};

/** A `datetime-local` value (read as UTC) or an ISO date-time: the ISO string the key rules take, `null` when empty. */
export function expiryFromForm(value: string): string | null {
  const v = value.trim();
  if (v === "") return null;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(v)) return `${v.length === 16 ? `${v}:00` : v}Z`;
  return v;
}

/** The `datetime-local` value (UTC) of a date. */
export function toDateTimeLocal(d: Date | string | null): string {
  const date = d === null ? null : new Date(d);
  return date && !Number.isNaN(date.getTime()) ? date.toISOString().slice(0, 16) : typeof d === "string" ? d : "";
}
