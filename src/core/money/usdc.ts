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
