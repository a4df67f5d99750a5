import { generateKeyPairSync } from 'node:crypto';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../crypto/keys.js';

/** Another key pair of the same size, made once per run. */
export interface StrangerKeys {
  publicKey: RsaPublicKey;
  privateKey: RsaPrivateKey;
}

/** Makes a stranger key pair with the modulus size of the target's key. */
export function makeStrangerKeys(bits: number): StrangerKeys {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
  const priv = parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) as RsaPrivateKey;
  return { privateKey: priv, publicKey: priv.publicKey };
}
