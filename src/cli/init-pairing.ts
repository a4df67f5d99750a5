import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError } from '../core/errors.js';
import type { CryptoProfile } from '../core/profile.js';
import type { MerchantKeyPairFiles } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import { loadEmulatorConfig } from '../emulator/config-load.js';
import { emulatorSetupFiles } from '../emulator/init-files.js';
import { loadMerchantSettings, merchantConfigTemplate, parseMerchantConfig } from '../merchant/config.js';
import { readUserFile, writeUserFile } from './io.js';

/** What `emulator --init` and `merchant --init` must agree on for the two to talk without an edit. */
interface Pairing {
  /** The X-API-KEY the service sends with callbacks and the merchant accepts (CB-KEY-SAME). */
  apiKey: string;
  /** The merchant key pair: the emulator holds the private half, the merchant opens callbacks with the public half. */
  keys: MerchantKeyPairFiles;
  profile: CryptoProfile;
  /** Where the emulator sends callbacks: the reference merchant's `POST /callback`. */
  callbackUrl: string;
}

/** One file of an init folder: name, contents, mode. */
type InitFile = readonly [name: string, contents: string, mode: number];

/** A private key in every form `keys generate` writes (PKCS#8 / SPKI PEM and bare Base64 DER). */
function keyFilesOf(privateKey: RsaPrivateKey): MerchantKeyPairFiles {
  const publicKey = privateKey.publicKey.keyObject;
  return {
    privatePem: privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateBase64: privateKey.keyObject.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    publicBase64: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}

/** The four key files both init folders carry. */
export function keyFiles(keys: MerchantKeyPairFiles): InitFile[] {
  return [
    ['merchant-private.pem', keys.privatePem, 0o600],
    ['merchant-public.pem', keys.publicPem, 0o644],
    ['merchant-private.b64', `${keys.privateBase64}\n`, 0o600],
    ['merchant-public.b64', `${keys.publicBase64}\n`, 0o644],
  ];
}

/** Writes an init folder: every file is checked first, so a refusal leaves no half set of keys behind. */
export function writeInitFiles(dir: string, files: readonly InitFile[], force: boolean): string[] {
  // Named as the user gave the folder (relative stays relative): the lines printed are the paths they typed.
  const paths = files.map(([name]) => join(dir, name));
  const existing = paths.filter((path) => existsSync(path));
  if (existing.length > 0 && !force)
    throw new ConfigError('file-exists', `${existing.join(', ')} exists already (use --force to overwrite)`);
  files.forEach(([, contents, mode], i) => writeUserFile(paths[i] as string, contents, { overwrite: force, mode }));
  return paths;
}

/**
 * The pairing an emulator.yaml holds for one of its merchants (the first unless `userId`): its main
 * API key, its key pair, its profile and its callback URL, which the reference merchant must serve.
 */
export function pairingFromEmulator(emulatorYaml: string, userId?: number): Pairing {
  const config = loadEmulatorConfig(emulatorYaml);
  const merchant = userId === undefined ? config.merchants[0] : config.merchants.find((m) => m.userId === userId);
  if (!merchant) {
    throw new ConfigError(
      'bad-flag',
      `${emulatorYaml} has no merchant${userId === undefined ? '' : ` with userId ${userId}`} (known: ${config.merchants.map((m) => m.userId).join(', ') || 'none'})`,
    );
  }
  const callbackUrl = merchant.callbackUrl ?? 'http://127.0.0.1:9400/callback';
  return {
    apiKey: merchant.apiKey,
    keys: keyFilesOf(merchant.keyPair.privateKey),
    profile: merchant.profile,
    callbackUrl,
  };
}

/** The pairing a merchant.yaml holds: a key valid now, the key pair (its `privateKey` is needed), the profile, its callback URL. */
export function pairingFromMerchant(merchantYaml: string, now = Date.now()): Pairing {
  const file = parseMerchantConfig(readUserFile(merchantYaml, 'merchant config').toString('utf8'), merchantYaml);
  const settings = loadMerchantSettings(file, readUserFile);
  if (file.privateKeyPath === undefined) {
    throw new ConfigError(
      'bad-merchant-config',
      `${merchantYaml}: privateKey is required to pair an emulator with it (the service encrypts callbacks with the private half)`,
    );
  }
  const privateKey = parseKey(readUserFile(file.privateKeyPath, 'private key'), {
    source: file.privateKeyPath,
    expect: 'private',
  }) as RsaPrivateKey;
  const valid = file.apiKeys.find(
    (entry) =>
      (!entry.notBefore || new Date(entry.notBefore).getTime() <= now) &&
      (!entry.notAfter || new Date(entry.notAfter).getTime() >= now),
  );
  if (!valid)
    throw new ConfigError(
      'bad-merchant-config',
      `${merchantYaml}: no apiKey is valid now, so no emulator could be paired with it`,
    );
  if (settings.port === 0) {
    throw new ConfigError(
      'bad-merchant-config',
      `${merchantYaml}: port is 0 (any free port), so the emulator cannot know where to send callbacks; give merchant.yaml a fixed port`,
    );
  }
  const host = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    apiKey: valid.key,
    keys: keyFilesOf(privateKey),
    profile: settings.profile,
    callbackUrl: `http://${hostInUrl}:${settings.port}/callback`,
  };
}

/** A profile as inline YAML flow (`{}` for the defaults), for the two config files. */
function profileNode(profile: CryptoProfile): Record<string, unknown> {
  return {
    padding: profile.padding,
    request: profile.request,
    response: profile.response,
    callback: profile.callback,
    plaintextBlock: profile.plaintextBlock,
  };
}

/**
 * merchant.yaml paired with an emulator: its API key, its profile, and the host and port of its
 * callback URL. The reference merchant serves only `POST /callback`, so another path is refused.
 */
export function pairedMerchantYaml(pairing: Pairing): string {
  const url = new URL(pairing.callbackUrl);
  if (url.protocol !== 'http:' || url.pathname !== '/callback') {
    throw new ConfigError(
      'bad-flag',
      `the emulator sends callbacks to ${pairing.callbackUrl}, but the reference merchant serves http://HOST:PORT/callback; set the emulator's callbackUrl to such a URL`,
    );
  }
  const doc = parseDocument(merchantConfigTemplate(pairing.apiKey));
  doc.set('profile', doc.createNode(profileNode(pairing.profile), { flow: true }));
  doc.set('port', Number(url.port || 80));
  doc.set('host', url.hostname.replace(/^\[|\]$/g, ''));
  return doc.toString({ lineWidth: 0 });
}

/** merchant.yaml text with another `port:`, comments kept. */
export function withPort(merchantYaml: string, port: number): string {
  const doc = parseDocument(merchantYaml);
  doc.set('port', port);
  return doc.toString({ lineWidth: 0 });
}

/** emulator.yaml paired with a merchant: the merchant's API key, profile and callback URL (the rest as `emulator --init` writes it). */
export function pairedEmulatorYaml(pairing: Pairing): string {
  // The template's own fresh key pair is dropped: the merchant's key files replace it.
  const template = emulatorSetupFiles({ callbackUrl: pairing.callbackUrl }).find(
    (file) => file.name === 'emulator.yaml',
  );
  if (!template) throw new Error('emulatorSetupFiles wrote no emulator.yaml');
  const doc = parseDocument(template.contents);
  doc.setIn(['merchants', 0, 'apiKey'], pairing.apiKey);
  doc.setIn(['merchants', 0, 'profile'], doc.createNode(profileNode(pairing.profile), { flow: true }));
  return doc.toString({ lineWidth: 0 });
}
