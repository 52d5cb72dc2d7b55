import { groupDigits } from "../../lib/digits.ts";

/** Micro-USDC per USDC: 6 decimals. */
const DECIMALS = 6;

/**
 * Integer micro-USDC (a decimal string or a bigint) as USDC with all six decimals, digit by digit: `"12345678"` →
 * `"12.345678"`, `"-5"` → `"-0.000005"`. No floating point anywhere.
 */
export function formatUsdc(micro: string | bigint): string {
  const value = typeof micro === "bigint" ? micro : BigInt(micro);
  const digits = (value < 0n ? -value : value).toString().padStart(DECIMALS + 1, "0");
  const whole = groupDigits(digits.slice(0, -DECIMALS));
  return `${value < 0n ? "-" : ""}${whole}.${digits.slice(-DECIMALS)}`;
}

/**
 * The same for people to read: at least two decimals and as many more as the amount needs to stay exact, never
 * rounded (`"10000"` → `"0.01"`, `"1500"` → `"0.0015"`, `"0"` → `"0.00"`, `"12345678"` → `"12.345678"`).
 */
export function formatUsdcAmount(micro: string | bigint): string {
  return formatUsdc(micro).replace(/(\.\d{2}\d*?)0+$/, "$1");
}

/** The same, shortened for an axis label: trailing zeros of the fraction dropped (`"10000"` → `"0.01"`, `"0"` → `"0"`). */
export function formatUsdcShort(micro: string | bigint): string {
  return formatUsdc(micro).replace(/\.?0+$/, "");
}

/**
 * Integer micro-USDC as a plain decimal amount, the form discovery documents price in (`x-payment-info.price.amount`
 * in USD): `"10000"` → `"0.01"`, `"1000000"` → `"1"`, `"1"` → `"0.000001"`. Digits only, no grouping, no trailing zero,
 * no floating point.
 */
export function usdcDecimal(micro: string | bigint): string {
  const value = typeof micro === "bigint" ? micro : BigInt(micro);
  const digits = (value < 0n ? -value : value).toString().padStart(DECIMALS + 1, "0");
  const fraction = digits.slice(-DECIMALS).replace(/0+$/, "");
  return `${value < 0n ? "-" : ""}${digits.slice(0, -DECIMALS)}${fraction ? `.${fraction}` : ""}`;
}

/**
 * A decimal USDC amount as typed (`0.01`, `12`, `1,000.5`, `.5`) as integer micro-USDC, digit by digit (`"10000"`), never
 * through floating point; `null` when it is not a plain non-negative decimal with at most six decimals. Leading zeros
 * are dropped (`"0"` for zero); whether the amount is an allowed price is the price rule's business.
 */
export function parseUsdc(text: string): string | null {
  const value = text.trim().replaceAll(",", "").replaceAll("_", "");
  const match = /^(\d*)(?:\.(\d*))?$/.exec(value);
  if (!match || value === "" || value === ".") return null;
  const [, whole = "", fraction = ""] = match;
  if (fraction.length > DECIMALS) return null;
  const digits = `${whole}${fraction.padEnd(DECIMALS, "0")}`.replace(/^0+(?=\d)/, "");
  return digits === "" ? "0" : digits;
}
