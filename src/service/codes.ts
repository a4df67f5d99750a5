/**
 * The service's business codes, answered by the emulator and the MSW handlers alike. The interface
 * names only `0` (success) and leaves the non-zero codes, and the error bodies of order submission
 * and card close, open (U-CODES): this table is the toolkit's choice, documented in docs/service-guide.md. Order-endpoint failures are HTTP 200 with the
 * envelope `{"code": <below>, "message": "<text>"}` and no `data` (ENV-CODE, ENV-MSG, ENV-DATA).
 */

/** Non-zero envelope codes of getEnergyMaxCount and withdrawWithoutVerify (U-CODES). */
export const ENVELOPE_CODES = Object.freeze({
  /** Content-Type is not application/x-www-form-urlencoded (ENERGY-CT, ORDER-CT). */
  badContentType: 40001,
  /** No form field `data`, an empty one, or more than one (ENERGY-DATA, ORDER-DATA). */
  missingData: 40002,
  /** `data` does not match ^[A-Za-z0-9+/]+={0,2}$ or is not strict Base64 (a '+' sent unencoded arrives as a space). */
  badBase64: 40003,
  /** The ciphertext does not open with the merchant's key and profile (wrong key, size, padding). */
  cannotDecrypt: 40004,
  /** The plaintext is not UTF-8 JSON, or not a JSON object. */
  badJson: 40005,
  /** The plain request breaks its schema: a missing field, a wrong type (ENERGY-REQ, ORDER-FIELDS). */
  invalidRequest: 40006,
  /** The order's userId is not the userId of the merchant that owns the X-API-KEY. */
  userIdMismatch: 40007,
  /** getEnergyMaxCount for another resource or chain than ENERGY on TRON (ENERGY-REQ allows refusing them). */
  unsupportedResource: 40010,
  /** tenantType is not 1 (ORDER-TENANT-TYPE). */
  tenantType: 40011,
  /** The merchant used this callBackId before (ORDER-CALLBACK-ID: the emulator refuses duplicates). */
  duplicateCallBackId: 40012,
  /** An ENERGY order without expiryHours, or expiryHours outside 1..8760 (ORDER-EXPIRY, U-LIMITS). */
  expiryHours: 40013,
  /** An ENERGY order whose amount is not a whole number from 1 (ORDER-ENERGY-AMOUNT). */
  energyAmount: 40014,
  /** A withdrawal amount that is not > 0 or has more than 38 integer or 18 fraction digits (U-LIMITS). */
  amount: 40015,
  /** An energy lease costs more than the merchant's available energy (amount × costPerTx > balance). */
  insufficientEnergy: 40016,
  /** symbol is not a digital-currency symbol (1-20 letters or digits) and not ENERGY (ORDER-KIND). */
  unsupportedSymbol: 40017,
  /** A bug of the emulator: it answered rather than crashed. */
  internal: 50000,
});

/** Name of an envelope failure. */
export type EnvelopeFailure = keyof typeof ENVELOPE_CODES;

/** HTTP statuses of the order endpoints' failures under the policy `refusals: http` (U-CODES). */
export const ENVELOPE_HTTP_STATUS: Readonly<Record<EnvelopeFailure, number>> = Object.freeze({
  badContentType: 415,
  missingData: 400,
  badBase64: 400,
  cannotDecrypt: 400,
  badJson: 400,
  invalidRequest: 400,
  userIdMismatch: 403,
  unsupportedResource: 400,
  tenantType: 400,
  duplicateCallBackId: 409,
  expiryHours: 400,
  energyAmount: 400,
  amount: 400,
  insufficientEnergy: 409,
  unsupportedSymbol: 400,
  internal: 500,
});

/** Card close `errorCode` values (U-CODES, U-CARD-VALUES); failures are HTTP 200 with success false. */
export const CARD_ERROR_CODES = Object.freeze({
  /** Content-Type is not application/json (CARD-PATH). */
  badContentType: 'BAD_CONTENT_TYPE',
  /** The body is not JSON, or a field is missing, empty or not a string (CARD-REQ). */
  badRequest: 'BAD_REQUEST',
  /** merchantId is not the userId (as a string) of a merchant of the emulator. */
  merchantNotFound: 'MERCHANT_NOT_FOUND',
  /** No card powerCardId of this merchant held by merchantUserId. */
  cardNotFound: 'CARD_NOT_FOUND',
  /** The card is closed already. */
  alreadyClosed: 'CARD_ALREADY_CLOSED',
  /** The merchant used this closeSerialNo for an earlier close. */
  duplicateSerialNo: 'DUPLICATE_SERIAL_NO',
  /** A bug of the emulator: it answered rather than crashed. */
  internal: 'INTERNAL_ERROR',
});

/** Name of a card close failure. */
export type CardFailure = keyof typeof CARD_ERROR_CODES;

/** HTTP statuses of card close failures under the policy `refusals: http` (U-CODES, U-CARD-VALUES); the body keeps the response shape. */
export const CARD_HTTP_STATUS: Readonly<Record<CardFailure, number>> = Object.freeze({
  badContentType: 415,
  badRequest: 400,
  merchantNotFound: 404,
  cardNotFound: 404,
  alreadyClosed: 409,
  duplicateSerialNo: 409,
  internal: 500,
});

/** Chinese and English texts of card close failures (errorMessage, errorMessageEn). */
export const CARD_ERROR_TEXTS: Readonly<Record<CardFailure, { zh: string; en: string }>> = Object.freeze({
  badContentType: { zh: '请求类型错误', en: 'Content-Type must be application/json' },
  badRequest: { zh: '请求参数错误', en: 'invalid request' },
  merchantNotFound: { zh: '商户不存在', en: 'merchant not found' },
  cardNotFound: { zh: '卡不存在', en: 'card not found' },
  alreadyClosed: { zh: '卡已关闭', en: 'card already closed' },
  duplicateSerialNo: { zh: '关闭流水号重复', en: 'duplicate closeSerialNo' },
  internal: { zh: '系统错误', en: 'internal error' },
});

/** HTTP error bodies the emulator sends outside the envelope (ERR-401, ERR-403, ERR-404, and 413 by choice). */
export const HTTP_ERROR_BODIES = Object.freeze({
  unauthorized: { code: 'UNAUTHORIZED', message: 'unauthorized' },
  forbidden: { code: 'FORBIDDEN', message: 'forbidden' },
  notFound: { code: 'NOT FOUND', message: 'not found' },
});

/** The body of a card close failure (CARD-ERR): success false, every error field filled, data null. */
export function cardFailureBody(requestId: string, failure: CardFailure, detail: string): Record<string, unknown> {
  const text = CARD_ERROR_TEXTS[failure];
  return {
    success: false,
    errorCode: CARD_ERROR_CODES[failure],
    errorMessage: text.zh,
    errorMessageEn: text.en,
    detailMessage: detail,
    requestId,
    data: null,
  };
}
