import { parseUsdc, usdcDecimal } from "./usdc.ts";

/** Highest accepted price: 1,000,000,000 USDC in micro-units. */
export const MAX_PRICE = 1_000_000_000_000_000n;

/** Canonical price: digits only, no sign, no leading zero, no decimal point; 1 to MAX_PRICE micro-USDC. */
export const PRICE_PATTERN = /^[1-9][0-9]*$/;

export const isValidPrice = (value: string) => PRICE_PATTERN.test(value) && value.length <= 16 && BigInt(value) <= MAX_PRICE;

/** What a price must be, as every refusal of one says it. */
export const PRICE_RULE = "Integer micro-USDC as a decimal string: 1 to 1000000000000000, no sign, point or leading zero";

/** `; for 0.01 USDC send "10000"` when `usdc` reads as a decimal USDC amount that is an allowed price, else "". */
function hint(usdc: string, valid: (micro: string) => boolean = isValidPrice): string {
  const micro = parseUsdc(usdc);
  return micro && valid(micro) ? `; for ${usdcDecimal(micro)} USDC send "${micro}"` : "";
}

/**
 * Why a price string is refused, or `null` when it is one. An amount with a decimal point (`"0.01"`: USDC, as the
 * dashboard takes it) is answered with the micro-USDC it stands for, digit by digit.
 */
export function priceProblem(value: string): string | null {
  if (isValidPrice(value)) return null;
  return `${PRICE_RULE}${value.includes(".") ? hint(value) : ""}`;
}

/**
 * The refusal of a price sent as a JSON number (`0.01`, `10000`), naming the string to send; `undefined` for any other
 * type (the schema's own message). The number's shortest decimal form is read digit by digit, as typed.
 */
export function priceNumberProblem(value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const text = String(value);
  if (isValidPrice(text)) return `Must be a string: send "${text}"`;
  return `Must be a string. ${PRICE_RULE}${hint(text)}`;
}

/**
 * Highest minimum deposit a paywall may ask of a session (docs/sessions.md): 1,000,000 USDC in micro-units. A deposit
 * stays locked in the buyer's channel until it is settled or refunded; a higher floor is a typo, not a price.
 */
export const MAX_SESSION_DEPOSIT = 1_000_000_000_000n;

/** What a session's minimum deposit must be, as every refusal of one says it. */
export const DEPOSIT_RULE = "Integer micro-USDC as a decimal string: 1 to 1000000000000, no sign, point or leading zero";

const isValidDeposit = (value: string) => PRICE_PATTERN.test(value) && value.length <= 13 && BigInt(value) <= MAX_SESSION_DEPOSIT;

/** Why a minimum deposit string is refused (not the price comparison: that spans fields), or `null` when it is one. */
export function depositProblem(value: string): string | null {
  if (isValidDeposit(value)) return null;
  return `${DEPOSIT_RULE}${value.includes(".") ? hint(value, isValidDeposit) : ""}`;
}
