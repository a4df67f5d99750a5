// A WalletCodec for the browser: node-forge only, no node:crypto and no Buffer, so a page bundle
// (setupWorker) never needs Node's crypto. It covers the platform's default profile (PKCS#1 v1.5,
// requests under the public key, responses under the private key, k-11 byte blocks); any other
// profile is refused when the handlers start, with the reason.
import forge from 'node-forge';
import { ConfigError } from '../core/errors.js';
import type { MerchantCrypto, OpenOutcome, WalletCodec } from './types.js';

// node-forge's raw RSA (private-key PKCS#1 type 1 encryption) exists at run time but not in @types/node-forge.
const forgeRsa = (forge.pki as unknown as { rsa: { encrypt(m: string, key: unknown, bt: 0x01 | 0x02): string } }).rsa;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function bytesOf(binary: string): Uint8Array {
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function binaryOf(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return binary;
}

/** A private key from PEM (PKCS#1 or PKCS#8) or bare Base64 DER, how the platform hands keys out. */
function privateKeyOf(text: string, source: string): forge.pki.rsa.PrivateKey {
  try {
    if (text.includes('-----BEGIN')) return forge.pki.privateKeyFromPem(text) as forge.pki.rsa.PrivateKey;
    return forge.pki.privateKeyFromAsn1(
      forge.asn1.fromDer(forge.util.decode64(text.replace(/\s+/g, ''))),
    ) as forge.pki.rsa.PrivateKey;
  } catch (error) {
    throw new ConfigError(
      'bad-key',
      `${source}: not an RSA private key in PEM or bare Base64 DER (${(error as Error).message})`,
    );
  }
}

/**
 * The default-profile codec on node-forge: what `wallet-conformance/msw/browser` uses unless
 * another `codec` is given.
 *
 * @example createWalletHandlers({ baseUrl, merchants: [{ userId: 10086, apiKey, privateKey: pem }], codec: forgeCodec })
 */
export const forgeCodec: WalletCodec = {
  forMerchant(privateKey, profile, source): MerchantCrypto {
    if (typeof privateKey !== 'string')
      throw new ConfigError('bad-key', `${source}: the browser codec takes the key as PEM or bare Base64 text`);
    if (
      profile.padding !== 'pkcs1' ||
      profile.request !== 'public' ||
      profile.response !== 'private' ||
      profile.plaintextBlock !== 'auto'
    ) {
      throw new ConfigError(
        'bad-profile',
        `${source}: the browser codec supports only the default profile (pkcs1, request: public, response: private, plaintextBlock: auto); pass your own codec for another`,
      );
    }
    const key = privateKeyOf(privateKey, source);
    const k = Math.ceil(key.n.bitLength() / 8);
    return {
      open(data): OpenOutcome {
        if (!BASE64.test(data) || data.length % 4 !== 0)
          return { ok: false, kind: 'base64', message: 'not standard padded Base64' };
        const cipher = forge.util.decode64(data);
        if (cipher.length === 0 || cipher.length % k !== 0)
          return {
            ok: false,
            kind: 'decrypt',
            message: `ciphertext of ${cipher.length} bytes is not a multiple of ${k}`,
          };
        let plain = '';
        for (let offset = 0; offset < cipher.length; offset += k) {
          try {
            plain += key.decrypt(cipher.slice(offset, offset + k), 'RSAES-PKCS1-V1_5');
          } catch (error) {
            return { ok: false, kind: 'decrypt', message: `block ${offset / k + 1}: ${(error as Error).message}` };
          }
        }
        try {
          return { ok: true, text: utf8.decode(bytesOf(plain)) };
        } catch {
          return { ok: false, kind: 'text', message: 'not UTF-8' };
        }
      },
      seal(json) {
        // Java-style segmentation: k-11 byte blocks, each encrypted to k bytes, concatenated, Base64 once.
        const plain = binaryOf(new TextEncoder().encode(json));
        let cipher = '';
        let offset = 0;
        do {
          cipher += forgeRsa.encrypt(plain.slice(offset, offset + k - 11), key, 0x01);
          offset += k - 11;
        } while (offset < plain.length);
        return forge.util.encode64(cipher);
      },
    };
  },
};
