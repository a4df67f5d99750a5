// The merchant guide's recipes are run, not just shown (docs/merchant-guide.md):
// - examples/decrypt/: the Java (JDK alone), Python (python3-cryptography) and Node (node:crypto)
//   programs open callbacks the toolkit sealed as the service does, block by block, with 1024- and
//   2048-bit keys, byte for byte;
// - examples/python-receiver/: the Flask receiver written from the guide passes `verify merchant`
//   with the probe, an expired key, a not-yet-valid key and a SIGKILL restart (a supervisor loop
//   starts it again), every check run.
// The guide's recipe blocks themselves (every language, refusals included): test/recipes.test.ts.
// Skipped only where java, or python3 with Flask and cryptography, is missing (.ci/run installs them).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealCallback } from '../src/wire/callback-delivery.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey } from '../src/crypto/keys.js';
import { pythonMissing, PYTHON } from './doubles/python.js';
import { ROOT, runCliAsync } from './support/cli.js';
import { freePort } from './support/ports.js';

const JAVA = spawnSync('java', ['-version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'wc-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A payload of several blocks at every key size, with 2-, 3- and 4-byte characters and an amount a float cannot hold. */
const PLAIN = JSON.stringify({
  type: 1,
  requestUUID: '0b6f7c1e-4a53-4f0e-9d2a-6d1f7e0c9a11',
  trackingId: 'dep-7f3a9c',
  tenantUserId: 'é€𝄞-20931',
  business: 0,
  txid: '9f2c'.repeat(40),
  chain: 'TRON',
  symbol: 'USDT',
  toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
}).replace(/}$/, ',"amount":12345678901234567890.123}');

const KEYS = [1024, 2048].map((bits) => {
  const pair = generateMerchantKeyPair(bits);
  const publicPem = join(dir, `public-${bits}.pem`);
  const publicB64 = join(dir, `public-${bits}.b64`);
  writeFileSync(publicPem, pair.publicPem);
  writeFileSync(
    publicB64,
    pair.publicPem
      .replace(/-----[A-Z ]+-----/g, '')
      .replace(/\s/g, '')
      .replace(/(.{64})/g, '$1\n'),
  );
  const body = sealCallback(PLAIN, parseKey(pair.privatePem, { expect: 'private' }));
  return { bits, publicPem, publicB64, body, blocks: Buffer.from(body, 'base64').length / (bits / 8) };
});

const RECIPES: Array<[string, boolean, (key: string) => string[]]> = [
  ['Java', JAVA, (key) => ['java', join(ROOT, 'examples/decrypt/CallbackDecrypt.java'), key]],
  ['Python', pythonMissing === undefined, (key) => [PYTHON, join(ROOT, 'examples/decrypt/callback_decrypt.py'), key]],
  ['Node', true, (key) => [process.execPath, join(ROOT, 'examples/decrypt/callback-decrypt.mjs'), key]],
];

describe("examples/decrypt: the guide's decryption recipes", () => {
  it('seal the payload into several blocks at each key size', () => {
    expect(KEYS.map((key) => key.blocks)).toEqual([4, 2]);
  });

  for (const [language, available, command] of RECIPES) {
    it.skipIf(!available)(
      `${language} opens callbacks block by block, byte for byte, from a PEM and from bare Base64`,
      () => {
        for (const key of KEYS) {
          // Both key formats on the first key size; a JVM start costs seconds, so the second runs on PEM alone.
          for (const file of key.bits === 1024 ? [key.publicPem, key.publicB64] : [key.publicPem]) {
            const [program, ...args] = command(file);
            const run = spawnSync(program!, args, { input: key.body, timeout: 60_000 });
            expect(run.stderr.toString(), `${language}, ${key.bits} bits`).toBe('');
            expect(run.status).toBe(0);
            expect(run.stdout.toString('utf8'), `${language}, ${key.bits} bits`).toBe(PLAIN);
          }
        }
      },
      120_000,
    );

    it.skipIf(!available)(
      `${language} refuses a body that went through a form decoder ('+' as a space)`,
      () => {
        const key = KEYS.find((k) => k.body.includes('+')) ?? KEYS[0]!;
        expect(key.body).toContain('+');
        const [program, ...args] = command(key.publicPem);
        const run = spawnSync(program!, args, { input: key.body.replace(/\+/g, ' '), timeout: 60_000 });
        expect(run.status).not.toBe(0);
        expect(run.stdout.toString()).toBe('');
      },
      60_000,
    );
  }
});

describe.skipIf(pythonMissing !== undefined)(
  `examples/python-receiver (skipped only when ${pythonMissing ?? 'python3, flask or cryptography is missing'})`,
  () => {
    const pair = generateMerchantKeyPair(1024);
    const apiKey = 'ak_example_py_5d21';
    const expiredKey = 'ak_example_py_old_77e0';
    const futureKey = 'ak_example_py_next_3c51';
    let port = 0;
    let supervisor: ReturnType<typeof spawn> | undefined;
    let output = '';

    beforeAll(async () => {
      writeFileSync(join(dir, 'merchant-public.pem'), pair.publicPem);
      writeFileSync(join(dir, 'merchant-private.pem'), pair.privatePem, { mode: 0o600 });
      writeFileSync(
        join(dir, 'keys.json'),
        JSON.stringify([
          { key: apiKey },
          { key: expiredKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2021-01-01T00:00:00Z' },
          { key: futureKey, notBefore: '2999-01-01T00:00:00Z' },
        ]),
      );
      port = await freePort();
      // The receiver as the guide starts it, under a loop that starts it again whenever it stops (what a supervisor does).
      const receiver = [
        PYTHON,
        join(ROOT, 'examples/python-receiver/receiver.py'),
        '--public-key',
        'merchant-public.pem',
        '--keys',
        'keys.json',
        '--db',
        'callbacks.sqlite',
        '--port',
        String(port),
        '--pid-file',
        'receiver.pid',
      ]
        .map((word) => `'${word}'`)
        .join(' ');
      supervisor = spawn('bash', ['-c', `for i in $(seq 1 20); do ${receiver}; sleep 0.1; done`], {
        cwd: dir,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      supervisor.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      supervisor.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(`http://127.0.0.1:${port}/probe`).then(
            (answer) => answer.ok,
            () => false,
          )
        )
          return;
        await new Promise((wait) => setTimeout(wait, 100));
      }
      throw new Error(`the Python receiver did not start:\n${output}`);
    }, 30_000);

    afterAll(() => {
      if (supervisor?.pid) {
        try {
          process.kill(-supervisor.pid, 'SIGTERM');
        } catch {
          // gone already
        }
      }
    });

    it('passes verify merchant with --probe-url, --expired-key, --future-key and --restart: no failure, nothing skipped', async () => {
      const reports = join(dir, 'reports');
      const restart = `pid=$(cat '${join(dir, 'receiver.pid')}'); kill -KILL "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done`;
      const run = await runCliAsync(
        [
          'verify',
          'merchant',
          '--callback-url',
          `http://127.0.0.1:${port}/callback`,
          '--private-key',
          join(dir, 'merchant-private.pem'),
          '--probe-url',
          `http://127.0.0.1:${port}/probe`,
          '--restart',
          restart,
          '--reports',
          reports,
        ],
        { env: { WALLET_API_KEY: apiKey, WALLET_EXPIRED_KEY: expiredKey, WALLET_FUTURE_KEY: futureKey } },
      );
      expect(existsSync(join(reports, 'report.json')), `${run.stderr}\n${run.stdout}`).toBe(true);
      const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as {
        summary: { passed: number; failed: number; skipped: number };
        results: Array<{ id: string; status: string; message: string }>;
      };
      const lines = (status: string) =>
        report.results
          .filter((r) => r.status === status)
          .map((r) => `${r.id}: ${r.message}`)
          .join('\n');
      expect(report.summary.failed, `${lines('failed')}\n${output.slice(-3000)}`).toBe(0);
      expect(lines('skipped')).toBe('');
      expect(run.status, run.stderr).toBe(0);
      expect(report.summary.passed).toBeGreaterThan(100);
      expect(report.results.find((r) => r.id.includes('redelivery-across-restart'))?.status).toBe('passed');
      expect(
        output.match(/Running on http/g)?.length ?? 0,
        'the restart case restarted the receiver',
      ).toBeGreaterThanOrEqual(2);
    }, 240_000);
  },
);
