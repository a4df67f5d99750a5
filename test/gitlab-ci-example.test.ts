// examples/gitlab-ci.yml as GitLab runs it, as far as that goes without GitLab and Docker: the YAML is
// read, each job's `extends:` resolved, its image and artifacts checked against what GitLab needs
// (a shell instead of the image's ENTRYPOINT, the JUnit report where verify writes it, reports kept
// when the job fails), and its `script:` lines run in one bash with errexit, as the Docker executor
// runs them, with the job's variables overridden by project variables (GitLab's precedence) that
// point at the embedded emulator and reference merchant. `wallet-conformance` on PATH is the built
// CLI, as it is in the image. The project's own wallet-conformance.yaml narrows the suites so the
// test stays short; it is the file a user would put there.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { faultyVariant } from './fixtures/emulator-faults.js';
import { ROOT } from './support/cli.js';

interface Job {
  extends?: string;
  stage?: string;
  image?: { name: string; entrypoint: string[] };
  variables?: Record<string, string>;
  services?: Array<{ name: string; alias: string }>;
  script?: string[];
  artifacts?: { when?: string; paths?: string[]; reports?: { junit?: string } };
}

const pipeline = parseYaml(readFileSync(join(ROOT, 'examples/gitlab-ci.yml'), 'utf8')) as Record<string, Job> & {
  variables: Record<string, string>;
};

/** A job with its `extends:` merged in (one level, which is all the example uses). */
function job(name: string): Job {
  const own = pipeline[name]!;
  return own.extends
    ? { ...pipeline[own.extends], ...own, variables: { ...pipeline[own.extends]!.variables, ...own.variables } }
    : own;
}

let scratch: string;
let bin: string;
let embedded: Embedded;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'wc-gitlab-'));
  bin = join(scratch, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'wallet-conformance'),
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/wallet-conformance.js')}" "$@"\n`,
  );
  chmodSync(join(bin, 'wallet-conformance'), 0o755);
  embedded = await startEmbedded();
}, 60_000);

afterAll(async () => {
  await embedded?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs a job's script in a fresh project folder; `project` are the project's CI/CD variables. */
function runJob(
  name: string,
  project: Record<string, string>,
  setUp: (dir: string) => void,
): Promise<{ status: number; log: string; dir: string }> {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  setUp(dir);
  const { script = [], variables = {} } = job(name);
  const env: NodeJS.ProcessEnv = {
    PATH: [bin, process.env.PATH ?? ''].join(delimiter),
    HOME: dir,
    NO_COLOR: '1',
    CI: 'true',
    GITLAB_CI: 'true',
    CI_PROJECT_DIR: dir,
    ...pipeline.variables,
    ...variables,
    ...project,
  };
  return new Promise((done) => {
    // GitLab's shell runs the lines in order and stops at the first that fails.
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script.join('\n')], {
      cwd: dir,
      env,
    });
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.on('close', (status) => done({ status: status ?? -1, log, dir }));
  });
}

describe('examples/gitlab-ci.yml', () => {
  it('gives each job a shell in the toolkit image and keeps the JUnit report and the reports, also when the job fails', () => {
    for (const name of ['verify-service', 'verify-merchant']) {
      const { image, artifacts, script = [] } = job(name);
      expect(image, name).toEqual({ name: '$WALLET_CONFORMANCE_IMAGE', entrypoint: [''] });
      expect(artifacts?.when, name).toBe('always');
      const reports = /--reports (\S+)/.exec(script.find((line) => line.includes(' verify ')) ?? '')?.[1];
      expect(reports, name).toBeDefined();
      expect(artifacts?.reports?.junit, name).toBe(`${reports}/junit.xml`);
      expect(artifacts?.paths, name).toEqual([`${reports}/`]);
      // Secrets come from project variables, never from the file.
      expect(JSON.stringify(job(name)), name).not.toMatch(/WALLET_API_KEY|CONTROL_TOKEN/);
    }
  });

  it('verify-service passes against a conforming service and writes junit.xml where GitLab reads it', async () => {
    const s = embedded.service;
    const run = await runJob(
      'verify-service',
      {
        WALLET_BASE_URL: s.baseUrl,
        WALLET_USER_ID: String(s.userId),
        WALLET_API_KEY: s.apiKey,
        WALLET_CONTROL_TOKEN: s.controlToken ?? '',
        WALLET_FORBIDDEN_KEY: s.forbiddenKey ?? '',
        WALLET_EXPIRED_KEY: s.expiredKey ?? '',
        WALLET_FUTURE_KEY: s.futureKey ?? '',
      },
      (dir) => {
        mkdirSync(join(dir, 'keys'));
        writeFileSync(
          join(dir, 'keys/merchant-public.pem'),
          s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
        );
        writeFileSync(join(dir, 'wallet-conformance.yaml'), 'suite: service/energy\n');
      },
    );
    expect(run.status, run.log).toBe(0);
    const junit = readFileSync(join(run.dir, job('verify-service').artifacts!.reports!.junit!), 'utf8');
    expect(junit).toMatch(/<testsuites[^>]* failures="0"/);
    expect(junit).toContain('service/energy');
    for (const secret of [s.apiKey, s.controlToken, s.forbiddenKey, s.expiredKey, s.futureKey])
      if (secret) expect(run.log).not.toContain(secret);
  }, 120_000);

  it('verify-service fails the job (exit 1) against a faulty service and still leaves the reports for the artifacts', async () => {
    const faulty = await startEmbedded({ emulatorVariant: faultyVariant(['envelope-code-string']) });
    try {
      const s = faulty.service;
      const run = await runJob(
        'verify-service',
        { WALLET_BASE_URL: s.baseUrl, WALLET_USER_ID: String(s.userId), WALLET_API_KEY: s.apiKey },
        (dir) => {
          mkdirSync(join(dir, 'keys'));
          writeFileSync(
            join(dir, 'keys/merchant-public.pem'),
            s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
          );
          writeFileSync(join(dir, 'wallet-conformance.yaml'), 'suite: service/energy\n');
        },
      );
      expect(run.status, run.log).toBe(1);
      const junit = readFileSync(join(run.dir, 'wallet-conformance-reports/junit.xml'), 'utf8');
      expect(junit).toMatch(/<failure[^>]*>/);
      expect(junit).toContain('ENV-CODE');
      for (const file of ['report.json', 'report.html', 'summary.md'])
        expect(existsSync(join(run.dir, 'wallet-conformance-reports', file)), file).toBe(true);
    } finally {
      await faulty.close();
    }
  }, 120_000);

  it('verify-merchant passes against the reference merchant with the private key from a File variable', async () => {
    const m = embedded.merchant;
    // A File variable: GitLab writes the value to a file outside the checkout and sets the variable to its path.
    const keyFile = join(scratch, 'merchant-private-key');
    writeFileSync(keyFile, m.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const run = await runJob(
      'verify-merchant',
      {
        CALLBACK_URL: m.callbackUrl,
        PROBE_URL: m.probeUrl ?? '',
        WALLET_API_KEY: m.apiKey,
        WALLET_EXPIRED_KEY: m.expiredKey ?? '',
        WALLET_FUTURE_KEY: m.futureKey ?? '',
        MERCHANT_PRIVATE_KEY: keyFile,
      },
      (dir) => {
        writeFileSync(join(dir, 'wallet-conformance.yaml'), 'suite: merchant/raw-body\n');
      },
    );
    expect(run.status, run.log).toBe(0);
    expect(readFileSync(join(run.dir, 'wallet-conformance-reports/junit.xml'), 'utf8')).toMatch(
      /<testsuites[^>]* failures="0"/,
    );
  }, 120_000);
});
