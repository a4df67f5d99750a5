import { createHash } from 'node:crypto';
import { stringifyExact } from '../../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile, type Direction, type KeyHalf } from '../../core/profile.js';
import { halfFor, sealJson } from '../../crypto/codec.js';
import { publicHalf, type RsaPrivateKey } from '../../crypto/keys.js';
import type { RsaEngine } from '../../crypto/rsa-engine.js';
import { badge, plainText, type ExampleBlock, type Panel, type Text } from './model.js';
import type { DemoCrypto } from './options.js';

/** An example as examples.json lists it. */
export interface ExampleRecord {
  page: string;
  id: string;
  direction: Direction;
  keyHalf: KeyHalf;
  /** The exact plain JSON text that was encrypted. */
  plain: string;
  /** Standard Base64 of the RSA blocks. */
  encrypted: string;
}

/** The demo key with every default resolved: profile, engine, size, fingerprint, both halves as PEM. */
interface DemoKey {
  key: RsaPrivateKey;
  profile: CryptoProfile;
  engine?: RsaEngine;
  bits: number;
  fingerprint: string;
  publicPem: string;
  privatePem: string;
}

/** Where examples are sealed and recorded: the demo key, and the records that become examples.json. */
export interface ExampleSink {
  demo: DemoKey;
  /** Filled while pages are built; becomes examples.json. */
  examples: ExampleRecord[];
}

/** Resolves the demo key's defaults (the default profile, node:crypto). */
export function demoKeyOf(demo: DemoCrypto): DemoKey {
  const key = demo.key;
  const publicDer = publicHalf(key).keyObject.export({ type: 'spki', format: 'der' });
  return {
    key,
    profile: demo.profile ?? { ...DEFAULT_PROFILE },
    ...(demo.engine ? { engine: demo.engine } : {}),
    bits: key.bits,
    fingerprint: createHash('sha256').update(publicDer).digest('hex'),
    publicPem: publicHalf(key).keyObject.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: key.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Which half of the demo key encrypts `direction`, and the ciphertext of the exact JSON text. */
function seal(
  sink: Pick<ExampleSink, 'demo'>,
  compact: string,
  direction: Direction,
): { cipher: string; keyHalf: KeyHalf } {
  const keyHalf = halfFor(direction, 'encrypt', sink.demo.profile);
  const key = keyHalf === 'private' ? sink.demo.key : publicHalf(sink.demo.key);
  const cipher = sealJson(compact, direction, key, {
    profile: sink.demo.profile,
    ...(sink.demo.engine ? { engine: sink.demo.engine } : {}),
  });
  return { cipher, keyHalf };
}

/** How the demo key encrypted a direction, in words. */
export function sealedWith(sink: Pick<ExampleSink, 'demo'>, direction: Direction, keyHalf: KeyHalf): Text {
  return [
    plainText(`encrypted with the demo key's `),
    badge('encrypted', `${keyHalf.toUpperCase()} half`),
    plainText(` (${direction} direction, ${sink.demo.profile.padding}, ${sink.demo.bits}-bit)`),
  ];
}

/**
 * An example block: the plain JSON beside its encrypted form; `wrap` turns the Base64 into what
 * travels (a form body, an envelope, a raw body). Records it for examples.json.
 */
export function exampleBlock(
  sink: ExampleSink,
  page: string,
  id: string,
  title: Text,
  value: unknown,
  direction: Direction,
  wrap: (cipher: string) => Panel[],
): ExampleBlock {
  const compact = stringifyExact(value);
  const { cipher, keyHalf } = seal(sink, compact, direction);
  sink.examples.push({ page, id, direction, keyHalf, plain: compact, encrypted: cipher });
  return {
    kind: 'example',
    id,
    title,
    direction,
    keyHalf,
    cipher,
    plain: { label: [plainText('plain JSON (before encryption)')], text: stringifyExact(value, 2) },
    encrypted: wrap(cipher),
  };
}
