import { randomBytes } from 'node:crypto';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { emulatorYaml } from './init-template.js';

/** One file of an emulator setup. */
interface SetupFile {
  /** File name inside the setup folder. */
  name: string;
  contents: string;
  mode: number;
}

/** Options of a new emulator setup. */
export interface SetupOptions {
  /** Key size of the merchant key pair (default 1024, the platform's). */
  bits?: number;
  /** `store:` of the config (default `emulator.sqlite` beside it). */
  store?: string;
  /** `callbackUrl:` of the merchant (default http://127.0.0.1:9400/callback). */
  callbackUrl?: string;
  /** `port:` of the config (default 8080). */
  port?: number;
}

/**
 * The files of a ready emulator setup: emulator.yaml (one merchant with a main key, a key without
 * permissions, an expired key, energy and two open cards) and the merchant key pair. Pure: the
 * caller writes them.
 *
 * @example emulatorSetupFiles().map((f) => f.name) // ['emulator.yaml', 'merchant-private.pem', ...]
 */
export function emulatorSetupFiles(options: SetupOptions = {}): SetupFile[] {
  const pair = generateMerchantKeyPair(options.bits ?? 1024);
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  const yaml = emulatorYaml({
    ...options,
    controlToken: hex(16),
    apiKey: `ak_${hex(12)}`,
    forbiddenKey: `forbidden-${hex(8)}`,
    expiredKey: `expired-${hex(8)}`,
    futureKey: `future-${hex(8)}`,
  });
  return [
    { name: 'emulator.yaml', contents: yaml, mode: 0o600 },
    { name: 'merchant-private.pem', contents: pair.privatePem, mode: 0o600 },
    { name: 'merchant-public.pem', contents: pair.publicPem, mode: 0o644 },
    { name: 'merchant-private.b64', contents: `${pair.privateBase64}\n`, mode: 0o600 },
    { name: 'merchant-public.b64', contents: `${pair.publicBase64}\n`, mode: 0o644 },
  ];
}
