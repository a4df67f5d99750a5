/**
 * The service side's derived cases (spec/dimensions.yaml, src/runner/derive/service.ts) against the
 * Python wallet service (test/doubles/python/service.py) with one defect each, written from the
 * rules and named in no hand-written suite: a key compared ignoring case or after strip(), a
 * whole-block plaintext refused, a callBackId echoed as a number, URL-decoded or cut, an energy
 * floor from a float division or a stale cost, a whole-block answer missing its last block, a
 * tenantType compared as it comes (true == 1) or kept in 32 bits, a null chainName taken for TRON,
 * a Content-Type checked by prefix, a multipart form read as the urlencoded one, energy query
 * fields checked for presence only. Each must end in exit 1 with a failure under its rule; the
 * correct service passes with no failure.
 * Only the derived suites run (`--suite 'service/derived/*'`), one verify per double, two at a time.
 * The block-edge defects run under a 1024- and a 2048-bit key: the key decides the block size.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { pythonMissing as missing, startPython } from './doubles/python.js';
import { runCliAsync } from './support/cli.js';
import { limit } from './support/limit.js';

/** The part of report.json these tests read. */
interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: { id: string; rules: string[]; status: string; message: string }[];
}

const dir = mkdtempSync(join(tmpdir(), 'wc-derived-service-'));
const apiKey = 'py-live-5b8e2c91d0a7';
const expiredKey = 'py-expired-77c1e0';
const futureKey = 'py-future-3a90d4';
const forbiddenKey = 'py-readonly-3a90f2';
const controlToken = 'py-control-41d2';
const userId = 40417;

/** A key pair of `bits` bits as PEM, the public half written where verify reads it. */
function keyPair(bits: 1024 | 2048): { privatePem: string; publicPath: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const publicPath = join(dir, `merchant-public-${bits}.pem`);
  writeFileSync(publicPath, publicKey.export({ type: 'spki', format: 'pem' }).toString());
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicPath };
}

const keys: Partial<Record<1024 | 2048, { privatePem: string; publicPath: string }>> = {};

/** Two runs at a time, as every doubles file runs (docs/contributing/doubles-runs.md). */
const slot = limit(2);

/** Starts the Python service with `fault` under a key of `bits` bits and runs the derived service suites against it (in a slot). */
const verifyDerived = (name: string, bits: 1024 | 2048, fault?: string) => slot(() => verifyOnce(name, bits, fault));

async function verifyOnce(name: string, bits: 1024 | 2048, fault?: string) {
  const key = (keys[bits] ??= keyPair(bits));
  // A folder per double: startPython writes its config file there, and the doubles start side by side.
  const own = join(dir, name);
  mkdirSync(own);
  const service = await startPython(
    'service.py',
    {
      privateKeyPem: key.privatePem,
      apiKey,
      forbiddenKey,
      expiredKey,
      futureKey,
      userId,
      controlToken,
      ...(fault ? { fault } : {}),
    },
    own,
  );
  const reports = join(own, 'reports');
  try {
    const run = await runCliAsync([
      'verify',
      'service',
      '--base-url',
      `${service.origin}/wallet-api`,
      '--card-base-url',
      `${service.origin}/cardsvc`,
      '--api-key',
      apiKey,
      '--public-key',
      key.publicPath,
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
      controlToken,
      '--suite',
      'service/derived/*',
      '--reports',
      reports,
    ]);
    if (!existsSync(join(reports, 'report.json')))
      throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile;
    return { run, report, output: service.output() };
  } finally {
    await service.close();
  }
}

const lines = (report: ReportFile, status: string) =>
  report.results
    .filter((r) => r.status === status)
    .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`)
    .join('\n');

/** Each defect, the rule its failure must name, and a case that must catch it. */
const FAULTS: { fault: string; rule: string; caughtBy: RegExp; bits?: (1024 | 2048)[] }[] = [
  {
    fault: 'key-case-insensitive',
    rule: 'ERR-401',
    caughtBy: /order-key-near-misses\/energy-key-(upper|lower|one-letter)-case\//,
  },
  { fault: 'key-trimmed', rule: 'ERR-401', caughtBy: /order-key-near-misses\/energy-key-nbsp-after\// },
  {
    fault: 'refuses-whole-block-plaintext',
    rule: 'CRYPTO-SAME',
    caughtBy: /request-block-edges\/energy-plaintext-at-\d-blocks?\/same-verdict/,
    bits: [1024, 2048],
  },
  {
    fault: 'callback-id-as-number',
    rule: 'ORDER-RES',
    caughtBy: /order-id-echo\/callbackid-(leading-zeros|beyond-2-53)\/result/,
  },
  { fault: 'callback-id-url-decoded', rule: 'ORDER-RES', caughtBy: /order-id-echo\/callbackid-form-special\/result/ },
  { fault: 'callback-id-truncated-512', rule: 'ORDER-RES', caughtBy: /order-id-echo\/callbackid-very-long\/result/ },
  {
    fault: 'energy-float-division',
    rule: 'ENERGY-FLOOR',
    caughtBy: /energy-floor-edges\/energy-(balance|quotient)-beyond-2-53\/energy-floor/,
  },
  { fault: 'energy-stale-cost', rule: 'ENERGY-FLOOR', caughtBy: /energy-floor-edges\/energy-[a-z0-9-]+\/energy-floor/ },
  {
    fault: 'tenant-type-truthy',
    rule: 'ORDER-FIELDS',
    caughtBy: /order-field-values\/order-tenant-type-boolean\/refused/,
  },
  {
    fault: 'tenant-type-int32',
    rule: 'ORDER-TENANT-TYPE',
    caughtBy: /order-field-values\/order-tenant-type-wraps-to-one\/refused/,
  },
  {
    fault: 'chain-name-null-default',
    rule: 'ORDER-FIELDS',
    caughtBy: /order-field-values\/order-string-field-null\/refused/,
  },
  {
    fault: 'content-type-prefix',
    rule: 'ENERGY-CT',
    caughtBy: /form-media-type-near-misses\/energy-media-type-prefix-extended\/refused/,
  },
  {
    fault: 'form-multipart',
    rule: 'ENERGY-CT',
    caughtBy: /form-media-type-near-misses\/energy-media-type-multipart-form\/refused/,
  },
  {
    fault: 'energy-fields-present-only',
    rule: 'ENERGY-REQ',
    caughtBy: /energy-field-values\/energy-(symbol|chain-name)-[a-z-]+\/refused/,
  },
  {
    fault: 'response-drops-whole-block',
    rule: 'ENV-DATA',
    caughtBy: /answer-block-edges\/order-answer-whole\/answer-edge/,
    bits: [1024, 2048],
  },
];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(missing !== undefined)(
  `derived service cases against Python doubles (skipped only when ${missing ?? 'python3 or its libraries are missing'})`,
  () => {
    describe('the correct service passes every derived case', { concurrent: true }, () => {
      it.for([1024, 2048] as const)(
        'with a %i-bit key: exit 0, no failure, every derived case run',
        { timeout: 240_000 },
        async (bits, { expect }) => {
          const { run, report, output } = await verifyDerived(`correct-${bits}`, bits);
          expect(report.summary.failed, `failed checks:\n${lines(report, 'failed')}\n${run.stderr}\n${output}`).toBe(0);
          expect(run.status, run.stderr).toBe(0);
          expect(lines(report, 'skipped')).toBe('');
          expect(report.results.every((result) => result.id.startsWith('service/derived/'))).toBe(true);
          expect(report.summary.passed).toBeGreaterThan(80);
        },
      );
    });

    describe('each defect fails under its rule', { concurrent: true }, () => {
      const runs = FAULTS.flatMap((entry) => (entry.bits ?? [1024]).map((bits) => ({ ...entry, bits })));
      it.for(runs)(
        '$fault ($bits-bit key): exit 1, failed under $rule',
        { timeout: 240_000 },
        async ({ fault, rule, caughtBy, bits }, { expect }) => {
          const { run, report } = await verifyDerived(`${fault}-${bits}`, bits, fault);
          const failed = report.results.filter((result) => result.status === 'failed');
          expect(run.status, `${run.stderr}\n${lines(report, 'failed')}`).toBe(1);
          const caught = failed.filter((result) => caughtBy.test(result.id));
          expect(caught.length, `no failure of ${caughtBy}; failed:\n${lines(report, 'failed')}`).toBeGreaterThan(0);
          for (const result of caught) expect(result.rules, `${result.id}: ${result.message}`).toContain(rule);
        },
      );
    });
  },
);
