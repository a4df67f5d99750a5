// Opens a callback body the way a Node merchant does (node:crypto alone):
//   node callback-decrypt.mjs merchant-public.pem < body.b64
// The body is Base64 of RSA blocks, each exactly as long as the key (128 bytes for 1024 bits, 256
// for 2048). The service encrypted each block with the merchant's PRIVATE key (PKCS#1 v1.5), so
// each block is opened with the PUBLIC key: crypto.publicDecrypt, one block per call.
import { constants, createPublicKey, publicDecrypt } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** An SPKI PEM ("BEGIN PUBLIC KEY") or the same DER as bare Base64. */
function readPublicKey(text) {
  if (text.includes('-----BEGIN')) return createPublicKey(text);
  return createPublicKey({ key: Buffer.from(text.replace(/\s/g, ''), 'base64'), format: 'der', type: 'spki' });
}

export function openCallback(body, key) {
  // Buffer.from(..., 'base64') skips what it cannot read: check the alphabet and padding first.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) throw new Error('not strict Base64');
  const cipherText = Buffer.from(body, 'base64');
  const block = key.asymmetricKeyDetails.modulusLength / 8; // key size in bytes: 128, 256, ...
  if (cipherText.length % block !== 0) throw new Error(`not a whole number of ${block}-byte blocks`);
  const parts = [];
  for (let at = 0; at < cipherText.length; at += block) {
    parts.push(publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, cipherText.subarray(at, at + block)));
  }
  return Buffer.concat(parts); // UTF-8 JSON: parse it with exact numbers (lossless-json), never JSON.parse for amounts
}

const key = readPublicKey(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(openCallback(readFileSync(0, 'utf8').replace(/\r?\n$/, ''), key));
