/**
 * How the service seals and addresses a callback delivery: the one definition that the emulator's
 * dispatcher, the runner's deliveries (and `callback send`), the generated properties and the load
 * tool all use. Sending it over HTTP stays in each transport.
 *
 * - CB-UUID: every delivery carries a fresh `requestUUID` (`withRequestUUID`).
 * - CB-DECRYPT: the payload text is encrypted with the half of the merchant's key pair that the
 *   crypto profile names for callbacks (the private key under the default profile), in the
 *   profile's padding and segmentation (`sealCallback`).
 * - CB-RAW-BODY: the body is that Base64 text itself, no form field.
 * - CB-HEADERS, AUTH-KEY, CB-KEY-SAME: `Content-Type: application/x-www-form-urlencoded` and the
 *   merchant's own `X-API-KEY` (`callbackHeaders`).
 */
import { randomUUID } from 'node:crypto';
import { stringifyExact, type ExactJson } from '../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile } from '../core/profile.js';
import { halfFor, sealBytes } from '../crypto/codec.js';
import { publicHalf, type RsaKey } from '../crypto/keys.js';

/** The Content-Type of a callback delivery (CB-HEADERS), though the body is raw Base64 (CB-RAW-BODY). */
export const CALLBACK_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/**
 * The headers of a delivery: the form Content-Type and the merchant's X-API-KEY; no X-API-KEY when
 * `apiKey` is undefined (a test of a key check). Names are lower case, as node:http sends them.
 */
export function callbackHeaders(apiKey: string | undefined): Record<string, string> {
  return { 'content-type': CALLBACK_CONTENT_TYPE, ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }) };
}

/** The key header's name as the interface spells it; HTTP header names are case-insensitive (RFC 9110), but a receiver may not be. */
export const API_KEY_HEADER = 'X-API-KEY';

/**
 * The headers as sent on the wire: the key header named as the interface spells it (`X-API-KEY`;
 * node:http keeps the case it is given), or as `keyHeader` spells it. Evidence keeps lower-case names.
 *
 * @example spelledHeaders({ 'x-api-key': 'k' }) // { 'X-API-KEY': 'k' }
 */
export function spelledHeaders(
  headers: Record<string, string>,
  keyHeader: string = API_KEY_HEADER,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    out[name.toLowerCase() === 'x-api-key' ? keyHeader : name] = value;
  return out;
}

/**
 * The payload of one delivery (CB-UUID): a copy with `requestUUID` set to `requestUUID` (a fresh
 * random UUID by default). An existing `requestUUID` is replaced where it stands; otherwise it
 * follows `type` (or leads, without a `type`). The event's own fields are untouched.
 */
export function withRequestUUID<T extends Record<string, ExactJson | undefined>>(
  payload: T,
  requestUUID: string = randomUUID(),
): T & { requestUUID: string } {
  if (Object.hasOwn(payload, 'requestUUID')) return { ...payload, requestUUID };
  const out: Record<string, ExactJson | undefined> = {};
  if (!Object.hasOwn(payload, 'type')) out.requestUUID = requestUUID;
  for (const [name, value] of Object.entries(payload)) {
    out[name] = value;
    if (name === 'type') out.requestUUID = requestUUID;
  }
  return out as T & { requestUUID: string };
}

/**
 * The key half the service encrypts callbacks with under `profile` (CB-DECRYPT), from the key the
 * caller holds: the service holds the merchant's private key, which carries its public half, so a
 * private key serves either profile. A public key where the profile needs the private half is
 * refused by the codec (`wrong-key-half`).
 */
export function callbackSealingKey(key: RsaKey, profile: CryptoProfile = DEFAULT_PROFILE): RsaKey {
  return halfFor('callback', 'encrypt', profile) === 'public' && key.half === 'private' ? publicHalf(key) : key;
}

/**
 * Seals a callback as the service does: the payload (an object written as exact JSON, its JSON
 * text, or raw bytes for a deliberately broken plaintext) encrypted for the callback direction with
 * the half of `key` that the profile names, returned as the Base64 text that is the whole body.
 *
 * @example sealCallback(withRequestUUID(payload), merchantPrivateKey, profile)
 */
export function sealCallback(
  payload: Record<string, ExactJson | undefined> | string | Uint8Array,
  key: RsaKey,
  profile: CryptoProfile = DEFAULT_PROFILE,
): string {
  const bytes =
    payload instanceof Uint8Array
      ? payload
      : Buffer.from(typeof payload === 'string' ? payload : stringifyExact(payload), 'utf8');
  return sealBytes(bytes, 'callback', callbackSealingKey(key, profile), { profile });
}
