/**
 * The toolkit's verdicts against implementations it did not write: a second wallet service on plain
 * node:http and merchant receivers on Express 5 and Fastify 5 (test/doubles/), each built from
 * the interface's description (spec/wallet-api.yaml, spec/rules.yaml) and the manual alone, with
 * their own legal choices on every open point.
 * A correct implementation must pass `verify` with no failure; a failure here is read first as a
 * toolkit that enforces something the interface leaves open.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import forge from 'node-forge';
import { decryptWithPrivate, decryptWithPublic, encryptWithPrivate, encryptWithPublic } from './doubles/crypto.js';
import { startExpressReceiver } from './doubles/express-receiver.js';
import { startFastifyReceiver } from './doubles/fastify-receiver.js';
import { startIndependentService } from './doubles/service.js';
import { runCliAsync, runCliWithHand } from './support/cli.js';
import { freePort } from './support/ports.js';
import { limit } from './support/limit.js';

/** The part of report.json (schemas/report.schema.json) these tests read. */
interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: { id: string; rules: string[]; status: string; message: string }[];
}

const dir = mkdtempSync(join(tmpdir(), 'wc-independent-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const apiKey = 'ind-live-7f3a9c2e41d84b6f';
const expiredKey = 'ind-expired-0b12c9aa';
const futureKey = 'ind-future-5d7e01bb';
const forbiddenKey = 'ind-readonly-5d6e7f80';
const userId = 70421;

/** The run's report.json; a run that wrote none (exit 2) fails with what the CLI printed. */
function readReport(reports: string, run: { status: number | null; stdout: string; stderr: string }): ReportFile {
  if (!existsSync(join(reports, 'report.json')))
    throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout.slice(-2000)}`);
  return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile;
}

/** Every failed result, one line each, so that a failing run says which check broke and why. */
function failuresOf(report: ReportFile): string {
  return report.results
    .filter((result) => result.status === 'failed')
    .map((result) => `${result.id} [${result.rules.join(', ')}]: ${result.message}`)
    .join('\n');
}

beforeAll(() => {
  writeFileSync(join(dir, 'merchant-public.pem'), publicPem);
  writeFileSync(join(dir, 'merchant-private.pem'), privatePem, { mode: 0o600 });
});

describe("the doubles' own segmented RSA agrees with node-forge, a third implementation", () => {
  const forgePrivate = forge.pki.privateKeyFromPem(privatePem);
  const forgePublic = forge.pki.publicKeyFromPem(publicPem);
  // forge's raw PKCS#1 v1.5 block operations (bt 0x01: private-key type 1; 0x02: public-key type 2), untyped in @types/node-forge.
  const rsa = forge.pki.rsa as unknown as {
    encrypt(m: string, key: unknown, bt: number): string;
    decrypt(ed: string, key: unknown, pub: boolean, unpad: boolean): string;
  };
  // Three blocks of k-11 = 117 bytes and a short fourth, with multi-byte UTF-8 across a block edge.
  const plain = Buffer.from(
    JSON.stringify({ amount: '12345678901234567890.123', memo: 'é'.repeat(150), pad: 'x'.repeat(60) }),
    'utf8',
  );
  const blocks = (bytes: Buffer, size: number) =>
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

  it('opens a request encrypted with the public key by the doubles, block by block, with forge', () => {
    const sealed = Buffer.from(encryptWithPublic(plain, publicKey), 'base64');
    expect(sealed.length).toBe(128 * Math.ceil(plain.length / 117));
    const opened = blocks(sealed, 128).map((block) =>
      Buffer.from(rsa.decrypt(block.toString('binary'), forgePrivate, false, true), 'binary'),
    );
    expect(Buffer.concat(opened).equals(plain)).toBe(true);
  });

  it('opens a request encrypted with the public key by forge, with the doubles', () => {
    const sealed = Buffer.concat(
      blocks(plain, 117).map((block) =>
        Buffer.from(rsa.encrypt(block.toString('binary'), forgePublic, 0x02), 'binary'),
      ),
    );
    expect(decryptWithPrivate(sealed.toString('base64'), privateKey).equals(plain)).toBe(true);
  });

  it('encrypts a callback with the private key byte for byte as forge does (PKCS#1 type 1 is deterministic)', () => {
    const forgeSealed = Buffer.concat(
      blocks(plain, 117).map((block) =>
        Buffer.from(rsa.encrypt(block.toString('binary'), forgePrivate, 0x01), 'binary'),
      ),
    );
    expect(encryptWithPrivate(plain, privateKey)).toBe(forgeSealed.toString('base64'));
    expect(decryptWithPublic(forgeSealed.toString('base64'), publicKey).equals(plain)).toBe(true);
  });

  it('refuses Base64 that is not strict and a block under another padding', () => {
    const sealed = encryptWithPrivate(plain, privateKey);
    expect(() => decryptWithPublic(sealed.replaceAll('+', '-').replaceAll('/', '_'), publicKey)).toThrow(/Base64/);
    expect(() => decryptWithPublic(sealed.slice(0, -4), publicKey)).toThrow();
    expect(() => decryptWithPrivate(sealed, privateKey)).toThrow(/PKCS#1|padding/);
  });
});

/**
 * The four `verify` runs below (two services, two receivers, each its own target on its own port)
 * run two at a time: a run mostly waits on its target's answers. A case's timeout includes its
 * wait for a slot.
 */
const slot = limit(2);

/** Two services, each with its own legal reading of the open points (see test/doubles/service.ts). */
const services = [
  {
    name: 'leases settle later, amounts capped at 30.12 digits, callback amounts as JSON numbers, card close without credentials',
    options: {},
    reports: 'service',
    minimumPassed: 85,
  },
  {
    name: 'leases lower the energy at once, amounts capped at 18.8 digits, callback amounts as decimal strings, unreadable requests and card failures as HTTP 4xx, own 401 body on order submission, lean callbacks with a charset, emission answered 202',
    options: {
      leaseSettleMs: 0,
      amountDigits: { integer: 18, fraction: 8 },
      callbackAmounts: 'string',
      requestFailures: 'http-400',
      cardFailureStatus: 'http-4xx',
      controlAccepted: true,
      callbackCharset: true,
      orderAuthBodies: 'own',
      callbackLean: true,
    },
    reports: 'service-strict',
    minimumPassed: 85,
  },
] as const;

describe.concurrent.each(services)(
  'verify service against an independent service on plain node:http ($name)',
  ({ options, reports: reportsName, minimumPassed }) => {
    let service: Awaited<ReturnType<typeof startIndependentService>>;
    beforeAll(async () => {
      service = await startIndependentService({
        port: 0,
        keys: { privateKey: privatePem },
        apiKey,
        forbiddenKey,
        expiredKey,
        futureKey,
        userId,
        controlToken: 'ind-control-1e2d3c',
        ...options,
      });
    });
    afterAll(() => service.close());

    it('passes every MUST check with every flag the service supports, and most checks really run', async ({
      expect,
    }) => {
      const reports = join(dir, reportsName);
      const control = `${service.url}/__control/merchants/${userId}`;
      const headers = { 'content-type': 'application/json', 'x-control-token': 'ind-control-1e2d3c' };
      // The hand-triggered case: the person points the merchant's callbacks at the runner and makes the service send one.
      const handTrigger = async (receiverUrl: string) => {
        await fetch(`${control}/callback-url`, { method: 'PUT', headers, body: JSON.stringify({ url: receiverUrl }) });
        await fetch(`${control}/callbacks`, { method: 'POST', headers, body: JSON.stringify({ type: 7 }) });
      };
      const run = await slot(async () =>
        runCliWithHand(
          [
            'verify',
            'service',
            '--base-url',
            service.url,
            '--card-base-url',
            service.cardBaseUrl,
            '--api-key',
            apiKey,
            '--public-key',
            join(dir, 'merchant-public.pem'),
            '--user-id',
            String(userId),
            '--allow-orders',
            '--forbidden-key',
            forbiddenKey,
            '--expired-key',
            expiredKey,
            '--future-key',
            futureKey,
            '--control-token',
            'ind-control-1e2d3c',
            '--reports',
            reports,
          ],
          await freePort(),
          handTrigger,
        ),
      );
      const report = readReport(reports, run);
      const failures = failuresOf(report);
      expect(report.summary.failed, `failed checks:\n${failures}\n${run.stderr}`).toBe(0);
      expect(run.status, `${run.stderr}\n${failures}`).toBe(0);
      // Of about 100 service checks, only the cases that create cards through a route outside
      // the documented control API cannot run (7 checks); checks on an open point this service reads
      // otherwise may be warnings.
      expect(
        report.summary.passed,
        `skipped: ${report.results
          .filter((r) => r.status === 'skipped')
          .map((r) => `${r.id}: ${r.message}`)
          .join('\n')}`,
      ).toBeGreaterThan(minimumPassed);
    }, 240_000);
  },
);

describe.concurrent('verify merchant against independent receivers', () => {
  const keys = [
    { key: apiKey, notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2099-12-31T23:59:59Z') },
    { key: expiredKey, notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2021-01-01T00:00:00Z') },
    { key: futureKey, notBefore: new Date('2999-01-01T00:00:00Z') },
  ];
  const receivers = [
    ['Express 5', () => startExpressReceiver({ port: 0, publicKey: publicPem, apiKeys: keys })],
    ['Fastify 5', () => startFastifyReceiver({ port: 0, publicKey: publicPem, apiKeys: keys })],
  ] as const;

  for (const [name, start] of receivers) {
    it(
      `passes every MUST check on a receiver built on ${name}, with the probe, and most checks really run`,
      async ({ expect }) =>
        slot(async () => {
          const receiver = await start();
          try {
            const reports = join(dir, name.replace(/\W+/g, '-'));
            const run = await runCliAsync([
              'verify',
              'merchant',
              '--callback-url',
              receiver.callbackUrl,
              '--api-key',
              apiKey,
              '--private-key',
              join(dir, 'merchant-private.pem'),
              '--probe-url',
              receiver.probeUrl,
              '--expired-key',
              expiredKey,
              '--future-key',
              futureKey,
              '--reports',
              reports,
            ]);
            const report = readReport(reports, run);
            const failures = failuresOf(report);
            expect(report.summary.failed, `failed checks:\n${failures}\n${run.stderr}`).toBe(0);
            expect(run.status, `${run.stderr}\n${failures}`).toBe(0);
            // With the probe, the expired key and the not-yet-valid key, only the restart case (--restart) cannot run.
            expect(
              report.summary.passed,
              `skipped: ${report.results
                .filter((r) => r.status === 'skipped')
                .map((r) => `${r.id}: ${r.message}`)
                .join('\n')}`,
            ).toBeGreaterThan(80);
          } finally {
            await receiver.close();
          }
        }),
      240_000,
    );
  }
});
