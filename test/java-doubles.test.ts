/**
 * The toolkit's verdicts against a receiver written in another language: test/doubles/java/Receiver.java,
 * plain JDK 17 (com.sun.net.httpserver, javax.crypto, java.util.Base64), built from the interface alone.
 * The real CLI (`verify merchant`) must pass the correct receiver and its legal variants (warnings
 * allowed) and fail each deliberate fault under the rule it breaks: exit 1, never exit 2 (a fault of
 * the target is never the user's configuration). Skipped only where no `java` is installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCliAsync } from './support/cli.js';

const JAVA = spawnSync('java', ['-version']).status === 0;
const RECEIVER = resolve(ROOT, 'test', 'doubles', 'java', 'Receiver.java');

/** The part of report.json these tests read. */
interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: { id: string; rules: string[]; status: string; message: string }[];
}

const dir = mkdtempSync(join(tmpdir(), 'wc-java-'));
const apiKey = 'java-live-4c1d9e7a';
const expiredKey = 'java-expired-93b0f2';
const children: ChildProcess[] = [];

/** Starts Receiver.java on a free loopback port (it prints its URLs once it serves). */
function startReceiver(faults: string[]): Promise<{ callbackUrl: string; probeUrl: string; stop: () => void }> {
  const args = [RECEIVER, '--port', '0', '--public-key', join(dir, 'public.pem'), '--api-key', apiKey, '--expired-key', expiredKey];
  if (faults.length > 0) args.push('--fault', faults.join(','));
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((done, failed) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => failed(new Error(`Receiver.java did not start in 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/callback) \(probe: (http:\/\/127\.0\.0\.1:\d+\/probe)\)/.exec(out);
      if (match) {
        clearTimeout(timer);
        done({ callbackUrl: match[1]!, probeUrl: match[2]!, stop: () => child.kill() });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      failed(new Error(`Receiver.java exited ${code}: ${err}`));
    });
  });
}

/** `verify merchant` against one receiver variant, with the probe and the expired key. */
async function verify(name: string, faults: string[]): Promise<{ status: number | null; stderr: string; report: ReportFile }> {
  const receiver = await startReceiver(faults);
  try {
    const reports = join(dir, name);
    const run = await runCliAsync([
      'verify', 'merchant', '--callback-url', receiver.callbackUrl, '--api-key', apiKey, '--expired-key', expiredKey,
      '--private-key', join(dir, 'private.pem'), '--probe-url', receiver.probeUrl, '--reports', reports,
    ]);
    if (!existsSync(join(reports, 'report.json'))) throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    return { status: run.status, stderr: run.stderr, report: JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile };
  } finally {
    receiver.stop();
  }
}

const failed = (report: ReportFile) => report.results.filter((result) => result.status === 'failed');
const lines = (results: ReportFile['results']) => results.map((result) => `${result.id} [${result.rules.join(', ')}]: ${result.message}`).join('\n');

beforeAll(() => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  writeFileSync(join(dir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(join(dir, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
});

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill();
});

describe.skipIf(!JAVA)('verify merchant against a Java receiver (java not installed: skipped)', () => {
  it('passes the correct receiver: exit 0, no failure, the probe cases really run', async () => {
    const { status, stderr, report } = await verify('correct', []);
    expect(report.summary.failed, lines(failed(report))).toBe(0);
    expect(status, stderr).toBe(0);
    expect(report.summary.passed).toBeGreaterThan(80);
  }, 120_000);

  it('passes the legal Java choices (probe re-serialised, scale stripped, body read before the key check, text/plain answer)', async () => {
    const { status, stderr, report } = await verify('legal', ['legal-reserialize', 'legal-strip-zeros', 'legal-read-body-first', 'legal-text-plain']);
    expect(report.summary.failed, lines(failed(report))).toBe(0);
    expect(status, stderr).toBe(0);
  }, 120_000);

  // Each fault: exit 1 (never 2), and a failed result under the rule it breaks, on the case that shows it.
  const faults: [fault: string, rule: string, where: RegExp][] = [
    ['url-decode-body', 'CB-RAW-BODY', /^merchant\/raw-body\//],
    ['latin1-text', 'CB-DECRYPT', /^merchant\/raw-body\/non-ascii-text\/processed-exact/],
    ['bigdecimal-double', 'ORDER-FIELDS', /^merchant\/raw-body\/(valid-deposit|multi-block)\/processed-exact/],
  ];
  for (const [fault, rule, where] of faults) {
    it(`fails the fault ${fault} under ${rule}, exit 1`, async () => {
      const { status, stderr, report } = await verify(fault, [fault]);
      const failures = failed(report);
      expect(status, `${stderr}\n${lines(failures)}`).toBe(1);
      expect(failures.filter((result) => result.rules.includes(rule) && where.test(result.id)), lines(failures)).not.toEqual([]);
    }, 120_000);
  }
});
