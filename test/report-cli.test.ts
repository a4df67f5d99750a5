import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../src/runner/types.js';
import { ROOT, runCli, runCliAsync, type CliRun } from './support/cli.js';
import { runCliInProcess } from './support/cli-in-process.js';

const OWN_SCHEMA = resolve(ROOT, 'schemas', 'report.schema.json');
const SHARED_SCHEMA = resolve(ROOT, '..', 'shared', 'report.schema.json');
const XSD = resolve(ROOT, 'test', 'fixtures', 'junit.xsd');
const XMLLINT = spawnSync('xmllint', ['--version']).status === 0;
const JAVA = spawnSync('java', ['-version']).status === 0;

/** Validates XML files against an XSD with xmllint, or with the JDK's validator where xmllint is missing. */
function validateXml(schema: string, files: string[]): { status: number | null; output: string } {
  const run = XMLLINT
    ? spawnSync('xmllint', ['--noout', '--schema', schema, ...files], { encoding: 'utf8' })
    : spawnSync('java', [resolve(ROOT, 'test', 'support', 'XsdValidate.java'), schema, ...files], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const readReport = (dir: string) => JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
const tmp = (name: string) => mkdtempSync(join(tmpdir(), `wc-${name}-`));

describe('reports of run, shards and report merge', () => {
  const dirs = { full: tmp('full'), one: tmp('shard-1'), two: tmp('shard-2'), merged: tmp('merged') };
  let runs: Record<'full' | 'one' | 'two', Omit<CliRun, 'stdoutBytes'>>;
  let merge: CliRun;

  beforeAll(async () => {
    // The embedded run: a full run and its two shards, then the shards merged.
    const [full, one, two] = await Promise.all([
      runCliAsync(['run', '--reports', dirs.full]),
      runCliAsync(['run', '--shard', '1/2', '--reports', dirs.one]),
      runCliAsync(['run', '--shard', '2/2', '--reports', dirs.two]),
    ]);
    runs = { full: full!, one: one!, two: two! };
    // The merge a user runs, as a process; the merges below (files in, files out) run the built main in-process.
    merge = runCli(['report', 'merge', dirs.one, dirs.two, '--reports', dirs.merged]);
  }, 180_000);

  it('merges the shards into the checks of the full run, in the same order, with the summary counted again', () => {
    for (const run of Object.values(runs)) expect(run.stderr).toBe('');
    expect(merge.stderr).toBe('');
    const merged = readReport(dirs.merged);
    const full = readReport(dirs.full);
    expect(readReport(dirs.one).results.length).toBeGreaterThan(0);
    expect(readReport(dirs.two).results.length).toBeGreaterThan(0);
    expect(merged.results.map((r) => r.id)).toEqual(full.results.map((r) => r.id));
    const count = (status: string) => merged.results.filter((r) => r.status === status).length;
    expect(merged.summary).toMatchObject({
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
    });
    expect(merge.status).toBe(merged.summary.failed > 0 ? 1 : 0);
    expect(merge.stdout).toContain(
      `merged 2 report(s): ${merged.summary.passed} passed, ${merged.summary.failed} failed`,
    );
    for (const name of ['junit.xml', 'summary.md', 'report.html'])
      expect(existsSync(join(dirs.merged, name)), name).toBe(true);
  });

  it('writes every report.json valid against the package schema, with a time per check and no lossless-json object', () => {
    const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(OWN_SCHEMA, 'utf8')) as object);
    for (const dir of Object.values(dirs)) {
      const text = readFileSync(join(dir, 'report.json'), 'utf8');
      expect(text).not.toContain('isLosslessNumber');
      const report = JSON.parse(text) as Report;
      expect(validate(report), `${dir}: ${JSON.stringify(validate.errors)}`).toBe(true);
      // A check skipped for a missing flag never ran: only the checks that ran have a time.
      for (const result of report.results.filter((r) => r.status !== 'skipped'))
        expect(typeof result.durationMs, result.id).toBe('number');
    }
  });

  it.runIf(existsSync(SHARED_SCHEMA))(
    'writes every report.json valid against ../shared/report.schema.json too (skipped where that development-only file is absent)',
    () => {
      const validate = new Ajv2020({ strict: false }).compile(
        JSON.parse(readFileSync(SHARED_SCHEMA, 'utf8')) as object,
      );
      for (const dir of Object.values(dirs))
        expect(validate(readReport(dir)), `${dir}: ${JSON.stringify(validate.errors)}`).toBe(true);
    },
  );

  it.runIf(XMLLINT || JAVA)(
    'writes junit.xml that validates against the common JUnit XSD (xmllint, else the JDK validator; skipped where neither is installed)',
    () => {
      const files = Object.values(dirs).map((dir) => join(dir, 'junit.xml'));
      const valid = validateXml(XSD, files);
      expect(
        valid.output
          .trim()
          .split('\n')
          .filter((line) => !line.endsWith(' validates')),
      ).toEqual([]);
      expect(valid.status).toBe(0);
      // The validator does judge: the counts the format has no place for are refused.
      const invalid = join(tmp('invalid'), 'junit.xml');
      writeFileSync(
        invalid,
        readFileSync(files[0]!, 'utf8').replace(
          '<testsuites name="wallet-conformance"',
          '<testsuites skipped="1" name="wallet-conformance"',
        ),
      );
      expect(validateXml(XSD, [invalid]).status).not.toBe(0);
    },
  );

  it('gives every testcase of junit.xml a time, one per check', () => {
    const xml = readFileSync(join(dirs.merged, 'junit.xml'), 'utf8');
    const cases = [...xml.matchAll(/<testcase [^>]*>/g)].map((m) => m[0]);
    expect(cases).toHaveLength(readReport(dirs.merged).results.length);
    for (const testcase of cases) expect(testcase).toMatch(/ time="\d+\.\d{3}"/);
  });

  it('refuses shards of different targets and names the field that differs (exit 2)', async () => {
    const other = tmp('other');
    const report = readReport(dirs.two) as Report & { target: { service: { userId: number } } };
    report.target.service.userId = 1;
    writeFileSync(join(other, 'report.json'), JSON.stringify(report));
    const run = await runCliInProcess(['report', 'merge', dirs.one, other, '--reports', tmp('out')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: the reports tested different targets: ${join(dirs.one, 'report.json')} and ${join(other, 'report.json')} differ in service.userId: 10086 ≠ 1\n`,
    );
  });

  it('refuses the same shard twice (exit 2)', async () => {
    const run = await runCliInProcess(['report', 'merge', dirs.one, dirs.one, '--reports', tmp('out')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^wallet-conformance: check \S+ is in both .* the shards overlap \(the same shard twice\?\)\n$/,
    );
  });

  it('judges merged reports against a baseline: a failure the baseline has is known (exit 0), the same failure against a clean baseline is worse (exit 1)', async () => {
    const failing = tmp('failing');
    cpSync(dirs.full, failing, { recursive: true });
    const report = readReport(failing);
    const victim = report.results.find((r) => r.status === 'passed')!;
    const clean = join(tmp('clean'), 'report.json');
    writeFileSync(
      clean,
      JSON.stringify({
        ...report,
        results: report.results.map((r) => ({ ...r, status: r.status === 'failed' ? 'passed' : r.status })),
      }),
    );
    Object.assign(victim, { status: 'failed', message: 'planted failure' });
    writeFileSync(join(failing, 'report.json'), JSON.stringify(report));
    const known = await runCliInProcess([
      'report',
      'merge',
      failing,
      '--reports',
      tmp('out'),
      '--baseline',
      join(failing, 'report.json'),
    ]);
    expect(known.stderr).toBe('');
    expect(known.stdout).toContain(`  known ${victim.id} [${victim.rules.join(', ')}]: planted failure`);
    expect(known.status).toBe(0);
    const out = tmp('out');
    const worse = await runCliInProcess(['report', 'merge', failing, '--reports', out, '--baseline', clean]);
    expect(worse.stdout).toContain(`  WORSE ${victim.id} [${victim.rules.join(', ')}] (was passed): planted failure`);
    expect(worse.status).toBe(1);
    const written = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { baseline: { worse: string[] } };
    expect(written.baseline.worse).toContain(victim.id);
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('### Worse than the baseline');
  });
});

describe('report merge and --baseline refuse bad input with one line and exit 2', () => {
  it('says which directory has no report.json', async () => {
    const empty = tmp('empty');
    const run = await runCliInProcess(['report', 'merge', empty, '--reports', tmp('out')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`wallet-conformance: cannot read report ${join(empty, 'report.json')}: no such file\n`);
  });

  it('says which report.json is not a report', async () => {
    const bad = tmp('bad');
    writeFileSync(join(bad, 'report.json'), '{"target":{},"summary":{"passed":1},"results":[]}');
    const run = await runCliInProcess(['report', 'merge', bad, '--reports', tmp('out')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: ${join(bad, 'report.json')} is not a wallet-conformance report.json: /summary must have required property 'failed'\n`,
    );
  });

  it('refuses a missing --baseline before running anything', () => {
    const reports = tmp('never');
    const run = runCli([
      'run',
      '--suite',
      'service/errors',
      '--baseline',
      join(reports, 'nope.json'),
      '--reports',
      reports,
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`wallet-conformance: cannot read baseline ${join(reports, 'nope.json')}: no such file\n`);
    expect(existsSync(join(reports, 'report.json'))).toBe(false);
  });
});

describe('the report schema as a package export', () => {
  it('resolves wallet-conformance/report.schema.json to the schema the tests validate with', () => {
    const script =
      "process.stdout.write(await import('node:fs').then((fs) => fs.readFileSync(new URL(import.meta.resolve('wallet-conformance/report.schema.json')), 'utf8')));";
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(readFileSync(OWN_SCHEMA, 'utf8'));
    const packageJson = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    expect(packageJson.files).toContain('schemas');
  });

  it('does not point users at ../shared', () => {
    expect(readFileSync(OWN_SCHEMA, 'utf8')).not.toContain('shared');
  });
});
