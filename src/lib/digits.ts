/** A string of digits with a comma between groups of three: `"1234567"` → `"1,234,567"`. */
export const groupDigits = (digits: string) => digits.replace(/\B(?=(\d{3})+$)/g, ",");

/** A whole count for people to read, `1234` → `"1,234"` (no Intl: a page shows hundreds of them). */
export const formatCount = (n: number) => (n < 0 ? `-${groupDigits(String(-n))}` : groupDigits(String(n)));
