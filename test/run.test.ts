import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import type { Report } from '../src/runner/types.js';
import { ROOT, runCli, type CliRun } from './support/cli.js';

const schemaPath = resolve(ROOT, '..', 'shared', 'report.schema.json');
const ruleIds = new Set(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => rule.id));

describe('npx wallet-conformance run (the embedded default)', () => {
  const reports = mkdtempSync(join(tmpdir(), 'wc-run-'));
  let run: CliRun;
  let report: Report;
  beforeAll(() => {
    run = runCli(['run', '--reports', reports]);
    report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
  }, 120_000);

  it('passes every MUST check of both sides and exits 0', () => {
    expect(run.stderr).toBe('');
    expect(report.results.filter((r) => r.status === 'failed')).toEqual([]);
    expect(run.status).toBe(0);
  });

  it('runs both sides with nothing skipped: the embedded targets offer control, probe, restart and every key; the case for a person (--listen) is left out', () => {
    expect(new Set(report.results.map((r) => r.suite.split('/')[0]))).toEqual(new Set(['service', 'merchant']));
    expect(report.results.filter((r) => r.status === 'skipped')).toEqual([]);
    expect(report.results.filter((r) => r.case === 'hand-triggered-callback')).toEqual([]);
    expect(report.summary).toMatchObject({ skipped: 0, skippedMust: 0 });
    expect(report.notes).toEqual([
      'service side: energy restored to its value before the run',
      'service side: callback URL restored to its value before the run',
    ]);
    expect(report.summary.passed).toBeGreaterThan(190);
  });

  it.runIf(existsSync(schemaPath))(
    'writes report.json exactly in the shape of report.schema.json, counts agreeing with results',
    () => {
      const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(schemaPath, 'utf8')) as object);
      expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
      const count = (status: string) => report.results.filter((r) => r.status === status).length;
      expect(report.summary).toMatchObject({
        passed: count('passed'),
        failed: count('failed'),
        warnings: count('warning'),
        skipped: count('skipped'),
      });
    },
  );

  it('names rule ids of the catalog on every result, and ids are unique', () => {
    for (const result of report.results)
      for (const rule of result.rules) expect(ruleIds.has(rule), `${result.id}: ${rule}`).toBe(true);
    expect(new Set(report.results.map((r) => r.id)).size).toBe(report.results.length);
  });

  it('writes junit.xml with one testcase per check, summary.md and a self-contained report.html', () => {
    const junit = readFileSync(join(reports, 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)?.length).toBe(report.results.length);
    expect(junit).toMatch(/<testcase [^>]*name="\[CB-ONCE[\],]/);
    expect(readFileSync(join(reports, 'summary.md'), 'utf8')).toMatch(
      /^## ✅ wallet-conformance: PASSED: every check that must pass passed/,
    );
    const html = readFileSync(join(reports, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script src=|<link /);
    expect(html).toContain('answer (decrypted)');
  });

  it('redacts API keys and never shows a private key', () => {
    const files = ['report.json', 'junit.xml', 'summary.md', 'report.html']
      .map((name) => readFileSync(join(reports, name), 'utf8'))
      .join('\n');
    expect(files).not.toMatch(/PRIVATE KEY/);
    const keys = [...files.matchAll(/"x-api-key":\s*"([^"]+)"/g)].map((m) => m[1]!);
    expect(keys.length).toBeGreaterThan(0);
    // A header sent twice (a derived near miss of the key) shows both fingerprints.
    for (const key of keys) expect(key).toMatch(/^[a-z]{2}…#[0-9a-f]{4}(, [a-z]{2}…#[0-9a-f]{4})?$/);
    expect(keys.filter((key) => key.includes(', ')).length).toBeGreaterThan(0);
  });

  it('prints progress and the path of the HTML report', () => {
    expect(run.stdout).toMatch(/running \d+ checks/);
    expect(run.stdout).toMatch(/reports: .*report\.html/);
  });
});

describe('verify: the toolkit cannot run (exit 2, one line)', () => {
  it('refuses an unreachable target', () => {
    const keys = mkdtempSync(join(tmpdir(), 'wc-keys-'));
    expect(runCli(['keys', 'generate', '--out', keys]).status).toBe(0);
    const run = runCli([
      'verify',
      'service',
      '--base-url',
      'http://127.0.0.1:9',
      '--api-key',
      'k',
      '--public-key',
      join(keys, 'merchant-public.pem'),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/--base-url http:\/\/127\.0\.0\.1:9 is unreachable/);
  });

  it('refuses a missing flag, a bad shard and a non-http URL', () => {
    expect(runCli(['verify', 'merchant', '--callback-url', 'http://127.0.0.1:9/cb', '--api-key', 'k']).stderr).toMatch(
      /--private-key/,
    );
    const bad = runCli(['run', '--shard', '3/2']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--shard must be i\/n/);
    const send = runCli([
      'callback',
      'send',
      '--url',
      'ftp://x/cb',
      '--api-key',
      'k',
      '--private-key',
      'nope.pem',
      '--type',
      '1',
    ]);
    expect(send.status).toBe(2);
    expect(send.stderr).toMatch(/--url must be an http:\/\/ URL|cannot read private key/);
    const ftp = runCli([
      'verify',
      'merchant',
      '--callback-url',
      'ftp://x/cb',
      '--api-key',
      'k',
      '--private-key',
      'nope.pem',
    ]);
    expect(ftp.status).toBe(2);
    expect(ftp.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a --suite that matches nothing (a typo is not a green run of nothing): exit 2, one line naming the suites there are', () => {
    const none = runCli(['run', '--suite', 'service/energyy']);
    expect(none.status).toBe(2);
    expect(none.stderr.trim()).toMatch(
      /^wallet-conformance: --suite "service\/energyy" matches no suite \(there are: merchant\/idempotency, .*service\/energy, /,
    );
    const otherSide = runCli([
      'verify',
      'merchant',
      '--callback-url',
      'http://127.0.0.1:9/cb',
      '--api-key',
      'k',
      '--private-key',
      resolve(ROOT, 'test/vectors/keys/rsa1024-private.pem'),
      '--suite',
      'service/energy',
    ]);
    expect(otherSide.status).toBe(2);
    expect(otherSide.stderr.trim()).toMatch(
      /^wallet-conformance: --suite "service\/energy" matches no merchant suite \(there are: merchant\/idempotency, /,
    );
  });

  it('names the suite file and the place when a suite is malformed', async () => {
    const { parseSuite } = await import('../src/runner/suite.js');
    expect(() =>
      parseSuite(
        'title: t\nside: service\ncases: [{id: x, title: t, rules: [ERR-401], steps: [{request: {endpoint: energy}, emit: {type: 1}}]}]',
        'service/bad',
      ),
    ).toThrow(/suite service\/bad: \/cases\/0\/steps\/0/);
    expect(() => parseSuite('title: t\nside: elsewhere\ncases: []', 'x')).toThrow(/suite x:/);
  });
});
