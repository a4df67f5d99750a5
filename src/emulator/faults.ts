/**
 * Deliberate deviations of the emulator, one rule broken each. They exist so the toolkit's own
 * tests can prove that every check can fail: `startEmulator(config, { faults: ['energy-round'] })`.
 * They are reachable only through that option, never from the YAML config, so a user cannot switch
 * one on by accident.
 */

/** One deliberate deviation of the service emulator. */
export type EmulatorFault =
  | 'err401-wrong-body'
  | 'err401-status-200'
  | 'err401-expired-ok'
  | 'no-403'
  | 'err404-wrong-body'
  | 'err404-status-400'
  | 'ct-any'
  | 'envelope-code-string'
  | 'envelope-message-null'
  | 'response-urlsafe-base64'
  | 'response-line-breaks'
  | 'response-wrong-key'
  | 'energy-round'
  | 'energy-stale'
  | 'order-tenant-type-any'
  | 'order-energy-no-expiry'
  | 'order-result-string'
  | 'order-id-echo-wrong'
  | 'order-amount-float'
  | 'card-missing-fields'
  | 'card-repeat-serial-ok'
  | 'callback-form-field'
  | 'callback-no-api-key'
  | 'callback-wrong-api-key'
  | 'callback-same-uuid'
  | 'callback-new-tracking-id'
  | 'callback-retry-after-ack'
  | 'callback-no-retry'
  | 'callback-public-key';

/** What a fault does and the rule ids it breaks. */
export interface FaultDescription {
  rules: readonly string[];
  effect: string;
}

/** Every fault, the rule it breaks and what it does; the table the runner's fault tests rely on. */
export const EMULATOR_FAULTS: Readonly<Record<EmulatorFault, FaultDescription>> = Object.freeze({
  'err401-wrong-body': { rules: ['ERR-401'], effect: 'HTTP 401 with {"code":"UNAUTHENTICATED","message":"unauthorized"}' },
  'err401-status-200': { rules: ['ERR-401'], effect: 'a missing, unknown or expired key gets HTTP 200 with the failure envelope {"code":401,"message":"unauthorized"}' },
  'err401-expired-ok': { rules: ['ERR-401'], effect: 'a key outside its validity window is accepted' },
  'no-403': { rules: ['ERR-403'], effect: 'a key without the permission is allowed' },
  'err404-wrong-body': { rules: ['ERR-404'], effect: 'HTTP 404 with {"code":"NOT_FOUND","message":"Not Found"}' },
  'err404-status-400': { rules: ['ERR-404'], effect: 'an unknown path gets HTTP 400 with the right body {"code":"NOT FOUND","message":"not found"}' },
  // Card close's Content-Type is named (CARD-PATH) but refusing another is not: only the order endpoints' refusal is judged.
  'ct-any': { rules: ['ENERGY-CT', 'ORDER-CT'], effect: 'any Content-Type is accepted (the body is parsed as a form, or as JSON for card close)' },
  'envelope-code-string': { rules: ['ENV-CODE'], effect: 'success envelopes carry code "0" (a string)' },
  'envelope-message-null': { rules: ['ENV-MSG'], effect: 'success envelopes carry message null' },
  'response-urlsafe-base64': { rules: ['CRYPTO-ENVELOPE'], effect: "envelope data uses the URL-safe alphabet ('-', '_') without padding" },
  'response-line-breaks': { rules: ['CRYPTO-ENVELOPE'], effect: 'envelope data is MIME-wrapped at 76 columns with CRLF' },
  'response-wrong-key': { rules: ['CRYPTO-SAME'], effect: "envelope data is encrypted under another key pair, so the merchant's key cannot open it" },
  'energy-round': { rules: ['ENERGY-FLOOR'], effect: 'energyMaxCount = Math.round(balance / costPerTx) instead of floor' },
  'energy-stale': { rules: ['ENERGY-FLOOR'], effect: 'energyMaxCount is computed from the balance at start-up, ignoring later updates and leases' },
  'order-tenant-type-any': { rules: ['ORDER-TENANT-TYPE'], effect: 'orders with tenantType other than 1 are accepted' },
  'order-energy-no-expiry': { rules: ['ORDER-EXPIRY'], effect: 'an ENERGY order without expiryHours is accepted' },
  'order-result-string': { rules: ['ORDER-RES'], effect: 'the order result carries tenantUserId as a string' },
  'order-id-echo-wrong': { rules: ['ORDER-RES'], effect: 'the order result id is not the request callBackId (a suffix is added)' },
  'order-amount-float': { rules: ['ORDER-FIELDS'], effect: 'amounts pass through a JS number: 123456789012.123456 is stored, and sent in the withdrawal callback, as 123456789012.12346' },
  'card-missing-fields': { rules: ['CARD-ERR'], effect: 'card close failures omit errorMessageEn' },
  // Refusing a reused closeSerialNo is the emulator's reading (U-CARD-VALUES; policy closeSerialNo): caught as a warning.
  'card-repeat-serial-ok': { rules: ['U-CARD-VALUES'], effect: 'a repeated closeSerialNo is not refused' },
  'callback-form-field': { rules: ['CB-RAW-BODY'], effect: 'callbacks are sent as the form field data=<percent-encoded Base64> instead of the raw Base64 body' },
  'callback-no-api-key': { rules: ['CB-HEADERS', 'AUTH-KEY'], effect: 'callbacks carry no X-API-KEY header' },
  'callback-wrong-api-key': { rules: ['CB-KEY-SAME', 'AUTH-KEY'], effect: "callbacks carry an X-API-KEY that is not the merchant's credential" },
  'callback-same-uuid': { rules: ['CB-UUID'], effect: 'every delivery of an event reuses one requestUUID' },
  'callback-new-tracking-id': { rules: ['CB-ID-OTHER'], effect: 'every delivery of an event gets a new trackingId' },
  'callback-retry-after-ack': { rules: ['CB-ERRCODE'], effect: 'a delivery answered errCode 0 is sent once more' },
  'callback-no-retry': { rules: ['CB-ERRCODE'], effect: 'a failed delivery is never retried' },
  'callback-public-key': { rules: ['CB-DECRYPT'], effect: "callbacks are encrypted with the other half of the merchant's key pair than the profile names (the public key by default), so the merchant cannot open them" },
});

/** Every fault name, in table order. */
export const FAULT_NAMES = Object.keys(EMULATOR_FAULTS) as EmulatorFault[];

/** Is `name` a fault of the emulator? */
export function isEmulatorFault(name: string): name is EmulatorFault {
  return Object.hasOwn(EMULATOR_FAULTS, name);
}

/** The active faults of one emulator, asked by name on the paths they change. */
export type FaultSet = ReadonlySet<EmulatorFault>;

/** Builds the fault set, refusing unknown names (a typo must not silently run a conforming emulator). */
export function faultSet(faults: readonly string[] = []): FaultSet {
  for (const fault of faults) {
    if (!isEmulatorFault(fault)) throw new TypeError(`unknown emulator fault ${JSON.stringify(fault)} (known: ${FAULT_NAMES.join(', ')})`);
  }
  return new Set(faults as EmulatorFault[]);
}
