/**
 * The toolkit's verdicts against two doubles written in Python from the interface alone
 * (test/doubles/python/): a Flask callback receiver and a wallet service on http.server, each with
 * its own legal readings of the open points (see their docstrings), on Debian's standard libraries
 * (python3-flask, python3-cryptography; .ci/run installs them). Each runs as a child process on a
 * loopback port it picks itself and reports. A correct implementation must pass `verify` with no
 * failure; a failure here is read first as a check that enforces what the interface leaves open.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptWithPublic, encryptWithPublic } from './doubles/crypto.js';
import { pythonMissing as missing, PYTHON, startPython as startIn, type PythonDouble } from './doubles/python.js';
import { ROOT, runCliAsync, runCliWithHand } from './support/cli.js';
import { freePort } from './support/ports.js';

/** The part of report.json these tests read. */
interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: { id: string; rules: string[]; status: string; message: string }[];
}

const dir = mkdtempSync(join(tmpdir(), 'wc-python-doubles-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const apiKey = 'py-live-5b8e2c91d0a7';
const expiredKey = 'py-expired-77c1e0';
const futureKey = 'py-future-3a90d4';
const forbiddenKey = 'py-readonly-3a90f2';
const controlToken = 'py-control-41d2';
const userId = 40417;
const startPython = (script: string, config: Record<string, unknown>) => startIn(script, config, dir);

/** The run's report.json; a run that wrote none (exit 2) fails with what the CLI printed. */
function readReport(reports: string, run: { status: number | null; stdout: string; stderr: string }): ReportFile {
  if (!existsSync(join(reports, 'report.json')))
    throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout.slice(-2000)}`);
  return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile;
}

const lines = (report: ReportFile, status: string) =>
  report.results
    .filter((r) => r.status === status)
    .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`)
    .join('\n');

beforeAll(() => {
  writeFileSync(join(dir, 'merchant-public.pem'), publicPem);
  writeFileSync(join(dir, 'merchant-private.pem'), privatePem, { mode: 0o600 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(missing !== undefined)(
  `Python doubles (skipped only when ${missing ?? 'python3, flask or cryptography is missing'})`,
  () => {
    // The receiver's describe and the service's run side by side (two targets, two CLIs; each mostly
    // waits on the other's answers); the service's cases run one after another, on one service.
    describe('verify merchant against a Flask receiver', { concurrent: true }, () => {
      let receiver: PythonDouble;
      beforeAll(async () => {
        receiver = await startPython('receiver.py', {
          publicKeyPem: publicPem,
          store: join(dir, 'receiver.sqlite'),
          apiKeys: [
            { key: apiKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2099-12-31T23:59:59Z' },
            { key: expiredKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2021-01-01T00:00:00Z' },
            { key: futureKey, notBefore: '2999-01-01T00:00:00Z' },
          ],
        });
      });
      afterAll(() => receiver?.close());

      it('passes every MUST check with the probe and a restart; its own readings warn at most, and every check runs', async ({
        expect,
      }) => {
        const reports = join(dir, 'merchant');
        // The restart re-executes the same process (same PID, same port, same SQLite file) and returns once it answers again.
        const restart = [
          PYTHON,
          join(ROOT, 'test/doubles/python/receiver.py'),
          '--restart',
          String(receiver.pid),
          String(receiver.port),
        ]
          .map((word) => `'${word}'`)
          .join(' ');
        const run = await runCliAsync([
          'verify',
          'merchant',
          '--callback-url',
          `${receiver.origin}/hooks/wallet`,
          '--api-key',
          apiKey,
          '--private-key',
          join(dir, 'merchant-private.pem'),
          '--probe-url',
          `${receiver.origin}/hooks/processed`,
          '--expired-key',
          expiredKey,
          '--future-key',
          futureKey,
          '--restart',
          restart,
          '--reports',
          reports,
        ]);
        const report = readReport(reports, run);
        expect(
          report.summary.failed,
          `failed checks:\n${lines(report, 'failed')}\n${run.stderr}\n${receiver.output()}`,
        ).toBe(0);
        expect(run.status, run.stderr).toBe(0);
        expect(lines(report, 'skipped')).toBe('');
        expect(report.summary.passed).toBeGreaterThan(90);
        // The first start, pre-flight's proof that --restart restarts it, the restart case's and the
        // three derived durability cases' (merchant/derived/acknowledged-survives-restart).
        expect(receiver.output().match(/LISTENING/g), 'the restart cases restarted the receiver').toHaveLength(6);
        // It processes a callback type it does not know (type 99) under the "other callbacks" key: a U-CB-FIELDS reading.
        expect(lines(report, 'warning')).toMatch(/invalid-payload/);
      }, 180_000);
    });

    describe('verify service against a wallet service on http.server', { concurrent: true }, () => {
      let service: PythonDouble;
      beforeAll(async () => {
        service = await startPython('service.py', {
          privateKeyPem: privatePem,
          apiKey,
          forbiddenKey,
          expiredKey,
          futureKey,
          userId,
          controlToken,
        });
      });
      afterAll(() => service?.close());

      it.sequential(
        'passes every MUST check with the control API; its own readings warn at most, and most checks really run',
        async () => {
          const reports = join(dir, 'service');
          const control = `${service.origin}/wallet-api/__control/merchants/${userId}`;
          const headers = { 'content-type': 'application/json', 'x-control-token': controlToken };
          // The hand-triggered case: the person points the merchant's callbacks at the runner and makes the service send one.
          const handTrigger = async (receiverUrl: string) => {
            await fetch(`${control}/callback-url`, {
              method: 'PUT',
              headers,
              body: JSON.stringify({ url: receiverUrl }),
            });
            await fetch(`${control}/callbacks`, { method: 'POST', headers, body: JSON.stringify({ type: 6 }) });
          };
          const run = await runCliWithHand(
            [
              'verify',
              'service',
              '--base-url',
              `${service.origin}/wallet-api`,
              '--card-base-url',
              `${service.origin}/cardsvc`,
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
              controlToken,
              '--reports',
              reports,
            ],
            await freePort(),
            handTrigger,
          );
          const report = readReport(reports, run);
          expect(
            report.summary.failed,
            `failed checks:\n${lines(report, 'failed')}\n${run.stderr}\n${service.output()}`,
          ).toBe(0);
          expect(run.status, run.stderr).toBe(0);
          expect(lines(report, 'skipped')).toBe('');
          expect(report.summary.passed).toBeGreaterThan(95);
          // Its closed symbol list refuses a symbol the toolkit's emulator takes: a U-LIMITS warning, not a failure.
          expect(lines(report, 'warning')).toMatch(/unlisted-symbol/);
        },
        180_000,
      );

      it.sequential(
        'passes the generated cases: what its lenient reading accepts (unpadded Base64, another padding) warns at most, never fails',
        async () => {
          const reports = join(dir, 'service-generated');
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
            join(dir, 'merchant-public.pem'),
            '--user-id',
            String(userId),
            '--allow-orders',
            '--control-token',
            controlToken,
            '--suite',
            'service/energy',
            '--generate',
            '60',
            '--seed',
            '3',
            '--reports',
            reports,
          ]);
          const report = readReport(reports, run);
          expect(report.summary.failed, `failed checks:\n${lines(report, 'failed')}\n${run.stderr}`).toBe(0);
          expect(report.results.filter((result) => result.id.startsWith('generated/service/')).length).toBeGreaterThan(
            3,
          );
          expect(run.status, run.stderr).toBe(0);
        },
        180_000,
      );

      it.sequential(
        'reads the requests it claims to: unpadded Base64 (U-CRYPTO), "40417" for userId (U-CODES), and refuses an unlisted symbol (U-LIMITS)',
        async () => {
          const post = async (path: string, plain: unknown, data?: (sealed: string) => string, needs?: RegExp) => {
            const seal = () => encryptWithPublic(Buffer.from(JSON.stringify(plain), 'utf8'), publicKey);
            let sealed = seal();
            // The padding is random: sealed again until the text has what the case changes (with a
            // 1024-bit key, about 1 text in 230 has neither '+' nor '/').
            while (needs && !needs.test(sealed)) sealed = seal();
            const res = await fetch(`${service.origin}/wallet-api/api/v1/api/order/${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
              body: new URLSearchParams({ data: data ? data(sealed) : sealed }).toString(),
            });
            const body = (await res.json()) as { code: number; message: string; data: string };
            return {
              code: body.code,
              result: body.code === 0 ? decryptWithPublic(body.data, publicKey).toString('utf8') : body.message,
            };
          };
          const energy = { symbol: 'ENERGY', chainName: 'TRON' };
          expect(encryptWithPublic(Buffer.from(JSON.stringify(energy)), publicKey)).toMatch(/=$/);
          expect(await post('getEnergyMaxCount', energy, (sealed) => sealed.replace(/=+$/, ''))).toMatchObject({
            code: 0,
            result: expect.stringMatching(/^\{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":\d+\}$/),
          });
          expect(
            (
              await post(
                'getEnergyMaxCount',
                energy,
                (sealed) => sealed.replaceAll('+', '-').replaceAll('/', '_'),
                /[+/]/,
              )
            ).code,
          ).toBe(2003);
          const order = {
            userId: String(userId),
            tenantUserId: 20931,
            tenantType: '1',
            callBackId: 'py-coerced-1',
            symbol: 'USDT',
            chainName: 'TRON',
            toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
            amount: '10.5',
          };
          expect(await post('withdrawWithoutVerify', order)).toEqual({
            code: 0,
            result: '{"tenantUserId":20931,"id":"py-coerced-1"}',
          });
          expect(
            (await post('withdrawWithoutVerify', { ...order, callBackId: 'py-coerced-2', symbol: 'WCTEST' })).code,
          ).toBe(2014);
        },
      );
    });
  },
);
