/** Highest accepted price: 1,000,000,000 USDC in micro-units. */
export const MAX_PRICE = 1_000_000_000_000_000n;

/** Canonical price: digits only, no sign, no leading zero, no decimal point; 1 to MAX_PRICE micro-USDC. */
export const PRICE_PATTERN = /^[1-9][0-9]*$/;

export const isValidPrice = (value: string) => PRICE_PATTERN.test(value) && value.length <= 16 && BigInt(value) <= MAX_PRICE;
