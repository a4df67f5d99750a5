/**
 * Exact decimals for amounts (ORDER-FIELDS: BigDecimal, never rounded through a binary float).
 * A decimal is kept as its unscaled digits and a scale, the way Java's BigDecimal holds it, and
 * written back as plain decimal text (no exponent), trailing fraction zeros kept.
 */

/** A finite decimal: value = (negative ? -1 : 1) × digits × 10^-scale. */
export interface ExactDecimal {
  readonly negative: boolean;
  /** Unscaled digits without leading zeros ('0' for zero). */
  readonly digits: string;
  /** Number of digits after the decimal point (≥ 0). */
  readonly scale: number;
}

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Exponents beyond this are refused before any digit string is built (1e999999999 must not allocate a gigabyte). */
const MAX_EXPONENT = 1000;

/**
 * Parses decimal text (a JSON number literal or a decimal string as Java's binding accepts it).
 * Returns undefined for anything else, including exponents of absurd magnitude.
 *
 * @example formatDecimal(parseDecimal('1.50e2')!) // '150'
 */
export function parseDecimal(text: string): ExactDecimal | undefined {
  if (text.length === 0 || text.length > 4096) return undefined;
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText] = match;
  if (whole.length === 0 && fraction.length === 0) return undefined;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT) return undefined;
  let digits = (whole + fraction).replace(/^0+/, '');
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits = digits.length === 0 ? '' : digits + '0'.repeat(-scale);
    scale = 0;
  }
  if (digits.length === 0) digits = '0';
  return { negative: sign === '-' && digits !== '0', digits, scale };
}

/** Plain decimal text of a decimal: `12345678901234567890.123`, `0.0015`, `10.50`. */
export function formatDecimal(value: ExactDecimal): string {
  const { digits, scale } = value;
  let text: string;
  if (scale === 0) text = digits;
  else {
    const padded = digits.padStart(scale + 1, '0');
    text = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  }
  return value.negative ? `-${text}` : text;
}

/** Is the value a whole number (`20`, `20.0`, `2e1`)? */
export function isWholeDecimal(value: ExactDecimal): boolean {
  return value.scale === 0 || /^0*$/.test(value.digits.slice(-value.scale)) || value.digits === '0';
}

/** The integer value of a whole decimal (callers check {@link isWholeDecimal} first). */
export function decimalToBigInt(value: ExactDecimal): bigint {
  const whole =
    value.scale === 0 ? value.digits : value.digits.slice(0, Math.max(0, value.digits.length - value.scale)) || '0';
  const big = BigInt(whole);
  return value.negative ? -big : big;
}

/** Digits before the decimal point, ignoring leading zeros. */
export function integerDigits(value: ExactDecimal): number {
  if (value.digits === '0') return 0;
  return Math.max(0, value.digits.length - value.scale);
}

/** Is the value strictly greater than zero? */
export function isPositive(value: ExactDecimal): boolean {
  return !value.negative && value.digits !== '0';
}
