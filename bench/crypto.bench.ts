/**
 * Figures of the RSA layer: encrypt + decrypt of a 1 KiB payload with 2048-bit keys and the
 * default profile, on our fast path, on node-forge alone, and `openssl speed rsa2048` measured in
 * the same run. Goal: our private-key operation within 1.5x of OpenSSL's on the same machine.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { Bench } from 'tinybench';
import { openBytes, sealBytes } from '../src/crypto/codec.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { forgeEngine, nativeEngine, type RsaEngine } from '../src/crypto/rsa-engine.js';

const BLOCKS_PER_KIB = Math.ceil(1024 / 245);

/** OpenSSL's own private-key (sign) and public-key (verify) operations per second. */
function opensslSpeed(): { sign: number; verify: number } | null {
  try {
    const out = execFileSync('openssl', ['speed', '-seconds', '2', 'rsa2048'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const line = out.split('\n').find((l) => /^rsa\s+2048 bits/.test(l));
    const numbers = line?.trim().split(/\s+/).slice(3).map(Number) ?? [];
    // "rsa 2048 bits <sign s> <verify s> <sign/s> <verify/s>" (OpenSSL 3.0 layout)
    const [, , sign, verify] = numbers;
    return sign && verify ? { sign, verify } : null;
  } catch {
    return null;
  }
}

export default async function bench(): Promise<void> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const priv = parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) as RsaPrivateKey;
  const plain = Buffer.from(JSON.stringify({ type: 3, note: 'x'.repeat(1000) }).slice(0, 1024));
  const sealedBy = (engine: RsaEngine) => ({
    callback: sealBytes(plain, 'callback', priv, { engine }),
    request: sealBytes(plain, 'request', priv.publicKey, { engine }),
  });
  const sealed = sealedBy(nativeEngine);

  const b = new Bench({ time: 1500, warmupTime: 200 });
  for (const engine of [nativeEngine, forgeEngine]) {
    b.add(
      `${engine.name} private encrypt 1 KiB (callback seal)`,
      () => void sealBytes(plain, 'callback', priv, { engine }),
    );
    b.add(
      `${engine.name} private decrypt 1 KiB (request open)`,
      () => void openBytes(sealed.request, 'request', priv, { engine }),
    );
    b.add(
      `${engine.name} public encrypt 1 KiB (request seal)`,
      () => void sealBytes(plain, 'request', priv.publicKey, { engine }),
    );
    b.add(
      `${engine.name} public decrypt 1 KiB (callback open)`,
      () => void openBytes(sealed.callback, 'callback', priv.publicKey, { engine }),
    );
  }
  await b.run();
  const hz = (name: string) => {
    const task = b.tasks.find((t) => t.name === name);
    const result = task?.result as { throughput?: { mean: number }; hz?: number } | undefined;
    return result?.throughput?.mean ?? result?.hz ?? 0;
  };
  console.log(`payload 1 KiB = ${BLOCKS_PER_KIB} blocks of a 2048-bit key, default profile (pkcs1)`);
  for (const op of [
    'private encrypt 1 KiB (callback seal)',
    'private decrypt 1 KiB (request open)',
    'public encrypt 1 KiB (request seal)',
    'public decrypt 1 KiB (callback open)',
  ]) {
    const native = hz(`native ${op}`);
    const forged = hz(`forge ${op}`);
    console.log(
      `${op.padEnd(40)} native=${native.toFixed(0)} ops/s  forge=${forged.toFixed(1)} ops/s  native/forge=${(native / forged).toFixed(1)}x`,
    );
  }
  const speed = opensslSpeed();
  if (!speed) {
    console.log('openssl speed: not available on this machine');
    return;
  }
  for (const [label, ours, theirs] of [
    ['private encrypt', hz('native private encrypt 1 KiB (callback seal)') * BLOCKS_PER_KIB, speed.sign],
    ['private decrypt', hz('native private decrypt 1 KiB (request open)') * BLOCKS_PER_KIB, speed.sign],
  ] as const) {
    const ratio = theirs / ours;
    console.log(
      `${label} per block: ours=${ours.toFixed(0)}/s openssl-sign=${theirs.toFixed(0)}/s openssl/ours=${ratio.toFixed(2)}x (goal <= 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
    );
  }
}
