/**
 * Faults written from the rules, in receivers outside TypeScript, that the derived cases
 * (spec/dimensions.yaml, src/runner/derive/merchant.ts) catch: the Python receiver
 * (test/doubles/python/receiver.py, its "fault" config field) and the Java one
 * (test/doubles/java/Receiver.java, --fault). For each fault, `verify merchant` with the derived case
 * that must catch it ends in exit 1 with that case failed under the fault's rule. For one fault
 * of each class (`alone`), the hand-written suites alone (`--suite 'merchant/*'`: `*` stops at a
 * slash, so no `merchant/derived/<row>` suite matches) pass it: only the new cases catch it. That
 * proof is a whole run of the hand-written suites, so it is made once per class, not per fault (CI's
 * time). The correct doubles pass everything.
 *
 * The Python receivers run under their crash supervisor (receiver.py --supervise) and `--restart`
 * kills the receiver with SIGKILL: a graceful stop would let a booking in flight finish, and only a
 * crash right after the answer proves that what was acknowledged was already durable (CB-ONCE).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { pythonMissing, PYTHON, startPython } from './doubles/python.js';
import { ROOT, runCliAsync } from './support/cli.js';
import { limit } from './support/limit.js';
import { startPrinting } from './support/process.js';

/** The part of report.json these tests read. */
interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: { id: string; rules: string[]; status: string; message: string }[];
}

/** One faulty double and how the suites must catch it. */
interface Fault {
  fault: string;
  /** The row of spec/dimensions.yaml whose derived suite catches it. */
  row: string;
  /** The failed result of that suite (its id after `merchant/derived/<row>/`), and the rule it names. */
  caught: string;
  rule: string;
  /** Also prove the hand-written suites alone pass it (one fault per class). */
  alone?: true;
  /** More of the double's config. */
  config?: Record<string, unknown>;
}

const PYTHON_FAULTS: Fault[] = [
  {
    fault: 'key-case-insensitive',
    row: 'callback-key-near-misses',
    caught: 'key-upper-case/answers',
    rule: 'CB-KEY-401',
    alone: true,
  },
  { fault: 'key-trimmed', row: 'callback-key-near-misses', caught: 'key-nbsp-after/answers', rule: 'CB-KEY-401' },
  { fault: 'key-prefix', row: 'callback-key-near-misses', caught: 'key-appended/answers', rule: 'CB-KEY-401' },
  {
    fault: 'key-accent-insensitive',
    row: 'callback-key-near-misses',
    caught: 'key-accented-letter/answers',
    rule: 'CB-KEY-401',
  },
  {
    fault: 'key-any-of',
    row: 'callback-key-near-misses',
    caught: 'key-twice-unknown-first/answers',
    rule: 'CB-KEY-401',
  },
  {
    fault: 'deposit-without-chain',
    row: 'deposit-key-components',
    caught: 'deposit-chain-differs/processed#2',
    rule: 'CB-ID-DEPOSIT',
    alone: true,
  },
  {
    // Every deposit to one address in one token is one event to it: the first deposit of any case is lost.
    fault: 'deposit-without-txid',
    row: 'deposit-key-components',
    caught: 'deposit-txid-differs/processed#2',
    rule: 'CB-ID-DEPOSIT',
    // A hand-written case catches it too: merchant/idempotency/deposit-new-tracking-id/processed (CB-ID-DEPOSIT).
  },
  {
    fault: 'deposit-without-toAddress',
    row: 'deposit-key-components',
    caught: 'deposit-to-address-differs/processed#2',
    rule: 'CB-ID-DEPOSIT',
    // A hand-written case catches it too: merchant/idempotency/deposit-wrapped-contract-twins/processed#2 (CB-ID-DEPOSIT).
  },
  {
    fault: 'withdrawal-keyed-with-chain',
    row: 'withdrawal-key-components',
    caught: 'withdrawal-only-chain-differs/processed#2',
    rule: 'CB-ID-WITHDRAW',
  },
  {
    fault: 'one-keyspace',
    row: 'deposit-key-components',
    caught: 'deposit-as-withdrawal/processed#2',
    rule: 'CB-ID-DEPOSIT',
    // A hand-written case catches it too: merchant/idempotency/deposit-wrapped-contract-twins/processed#2 (CB-ID-DEPOSIT).
  },
  {
    fault: 'chain-events-one-keyspace',
    row: 'deposit-key-components',
    caught: 'deposit-as-withdrawal/processed#2',
    rule: 'CB-ID-DEPOSIT',
  },
  {
    fault: 'other-without-callbackid',
    row: 'other-key-components',
    caught: 'withdrawal-request-call-back-id-differs/processed#2',
    rule: 'CB-ID-OTHER',
  },
  {
    fault: 'alerts-one-key',
    row: 'other-key-components',
    caught: 'not-enough-money-as-not-enough-hot-money/processed#2',
    rule: 'CB-ID-OTHER',
  },
  {
    fault: 'replay-on-start',
    row: 'acknowledged-survives-restart',
    caught: 'acknowledged-deposit-survives-restart/processed',
    rule: 'CB-ONCE',
  },
  {
    // Booked 300 ms after the answer: the restart command kills it well within that on a loaded machine
    // (at the default 20 ms, two CPU burners on two cores let a booking finish first in 6 of 15 tries).
    fault: 'ack-then-book',
    row: 'acknowledged-survives-restart',
    caught: 'acknowledged-deposit-survives-restart/processed',
    rule: 'CB-ONCE',
    config: { bookAfterMs: 300 },
    alone: true,
  },
  {
    // Every full block is refused, and a callback longer than one block has one: any multi-block case catches it.
    fault: 'full-block-refused',
    row: 'callback-block-edges',
    caught: 'plaintext-whole/answers',
    rule: 'CB-DECRYPT',
    // A hand-written case catches it too: merchant/raw-body/multi-block/answers (CB-DECRYPT).
  },
  {
    fault: 'whole-blocks-refused',
    row: 'callback-block-edges',
    caught: 'plaintext-whole/answers',
    rule: 'CB-DECRYPT',
    alone: true,
  },
  {
    fault: 'utf8-per-block',
    row: 'callback-block-edges',
    caught: 'plaintext-split-character/processed-exact',
    rule: 'CB-DECRYPT',
  },
];

const JAVA_FAULTS: Fault[] = [
  {
    fault: 'key-case-insensitive',
    row: 'callback-key-near-misses',
    caught: 'key-upper-case/answers',
    rule: 'CB-KEY-401',
  },
  {
    fault: 'deposit-without-chain',
    row: 'deposit-key-components',
    caught: 'deposit-chain-differs/processed#2',
    rule: 'CB-ID-DEPOSIT',
  },
];

const dir = mkdtempSync(join(tmpdir(), 'wc-derived-doubles-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const apiKey = 'py-live-5b8e2c91d0a7';
const expiredKey = 'py-expired-77c1e0';
const futureKey = 'py-future-3a90d4';
const RECEIVER_PY = join(ROOT, 'test/doubles/python/receiver.py');
const RECEIVER_JAVA = resolve(ROOT, 'test', 'doubles', 'java', 'Receiver.java');
const JAVA = spawnSync('java', ['-version']).status === 0 && spawnSync('javac', ['-version']).status === 0;
const children: ChildProcess[] = [];

/**
 * Four runs (a double and a CLI each) at once: a run mostly waits on settle windows, restarts and
 * loopback. A case's timeout includes its wait for a slot.
 */
const slot = limit(4);

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** `verify merchant` against a running receiver: exit status and report.json. */
async function verify(
  name: string,
  target: { callback: string; probe: string; restart?: string },
  filter?: { suite?: string; case?: string },
) {
  const reports = join(dir, `reports-${name}`);
  const run = await runCliAsync([
    'verify',
    'merchant',
    '--callback-url',
    target.callback,
    '--api-key',
    apiKey,
    '--expired-key',
    expiredKey,
    '--future-key',
    futureKey,
    '--private-key',
    join(dir, 'private.pem'),
    '--probe-url',
    target.probe,
    ...(target.restart ? ['--restart', target.restart] : []),
    ...(filter?.suite ? ['--suite', filter.suite] : []),
    ...(filter?.case ? ['--case', filter.case] : []),
    '--reports',
    reports,
  ]);
  if (!existsSync(join(reports, 'report.json')))
    throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout.slice(-2000)}`);
  return {
    status: run.status,
    stderr: run.stderr,
    report: JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile,
  };
}

/**
 * The Python receiver with `fault`, under its crash supervisor, in a folder of its own (config,
 * SQLite store, pid file); `restart` kills it with -9 and returns once the supervisor's new one answers.
 */
async function startPythonReceiver(name: string, fault: string, config: Record<string, unknown> = {}) {
  const home = mkdtempSync(join(dir, `${name}-`));
  const pidFile = join(home, 'receiver.pid');
  const apiKeys = [
    { key: apiKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2099-12-31T23:59:59Z' },
    { key: expiredKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2021-01-01T00:00:00Z' },
    { key: futureKey, notBefore: '2999-01-01T00:00:00Z' },
  ];
  const receiver = await startPython(
    'receiver.py',
    { publicKeyPem: publicPem, store: join(home, 'receiver.sqlite'), pidFile, fault, apiKeys, ...config },
    home,
    ['--supervise'],
  );
  const restart = `read pid boot < ${quote(pidFile)} && kill -9 "$pid" && exec ${quote(PYTHON)} ${quote(RECEIVER_PY)} --await-boot ${receiver.port} "$boot"`;
  return {
    receiver,
    target: { callback: `${receiver.origin}/hooks/wallet`, probe: `${receiver.origin}/hooks/processed`, restart },
  };
}

/** JVM flags of a short-lived server (as test/java-doubles.test.ts): C1 only, the serial collector. */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xshare:auto'];
let classes: string | undefined;
function compiled(): string {
  if (classes === undefined) {
    const into = mkdtempSync(join(dir, 'classes-'));
    const run = spawnSync('javac', [...JVM_FLAGS.map((flag) => `-J${flag}`), '-d', into, RECEIVER_JAVA], {
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`javac ${RECEIVER_JAVA} failed: ${run.stderr}`);
    classes = into;
  }
  return classes;
}

/** The Java receiver with `faults` (no restart: it keeps its events in memory). */
async function startJavaReceiver(faults: string[]) {
  const started = await startPrinting(
    'java',
    [
      ...JVM_FLAGS,
      '-cp',
      compiled(),
      'Receiver',
      '--port',
      '0',
      '--public-key',
      join(dir, 'public.pem'),
      '--api-key',
      apiKey,
      '--expired-key',
      expiredKey,
      '--future-key',
      futureKey,
      ...(faults.length ? ['--fault', faults.join(',')] : []),
    ],
    /listening on (http:\/\/127\.0\.0\.1:\d+\/callback) \(probe: (http:\/\/127\.0\.0\.1:\d+\/probe)\)/,
    children,
    'Receiver.java',
  );
  return { stop: started.stop, target: { callback: started.match[1]!, probe: started.match[2]! } };
}

const byStatus = (report: ReportFile, status: string) =>
  report.results
    .filter((result) => result.status === status)
    .map((result) => `${result.id} [${result.rules.join(', ')}]: ${result.message}`)
    .join('\n');

/** The result `id` of the report, as `status` and whether it names `rule`. */
const verdict = (report: ReportFile, id: string, rule: string) => {
  const result = report.results.find((one) => one.id === id);
  return { id, status: result?.status, namesRule: result?.rules.includes(rule) };
};

beforeAll(() => {
  writeFileSync(join(dir, 'public.pem'), publicPem);
  writeFileSync(join(dir, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
});
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A fault's runs against one receiver (each case delivers its own events): the derived case that
 * must catch it (alone: the assertion reads that case only, and the correct receiver's run proves the
 * whole of every row passes a receiver without the fault), then, for a fault marked `alone`, the
 * hand-written suites alone.
 */
async function judge(fault: Fault, target: { callback: string; probe: string; restart?: string }, name: string) {
  const derived = await verify(`${name}-derived`, target, {
    case: `merchant/derived/${fault.row}/${fault.caught.split('/')[0]}`,
  });
  const handWritten = fault.alone ? await verify(`${name}-hand-written`, target, { suite: 'merchant/*' }) : undefined;
  return { derived, handWritten };
}

/** The assertions every fault's runs must meet, Python or Java. */
function expectCaughtOnlyWhereRecorded(
  expect: import('vitest').ExpectStatic,
  fault: Fault,
  runs: Awaited<ReturnType<typeof judge>>,
  output: string,
  restarts: boolean,
) {
  const { derived, handWritten } = runs;
  const caught = `merchant/derived/${fault.row}/${fault.caught}`;
  expect(
    verdict(derived.report, caught, fault.rule),
    `failed:\n${byStatus(derived.report, 'failed')}\n${derived.stderr}\n${output}`,
  ).toEqual({
    id: caught,
    status: 'failed',
    namesRule: true,
  });
  expect(derived.status, derived.stderr).toBe(1);
  if (!handWritten) return;
  expect(
    byStatus(handWritten.report, 'failed'),
    'the hand-written suites alone catch it: it is no proof that only the new cases do',
  ).toBe('');
  expect(handWritten.status, handWritten.stderr).toBe(0);
  // Skipped is no pass: a receiver with a restart runs every hand-written case (without one, the restart case skips).
  if (restarts) expect(byStatus(handWritten.report, 'skipped')).toBe('');
}

describe.skipIf(pythonMissing !== undefined)(
  `derived cases against faulty Python receivers (skipped: ${pythonMissing ?? ''})`,
  { concurrent: true },
  () => {
    it('the correct receiver passes every suite, derived and hand-written, restarted by SIGKILL: exit 0, nothing failed or skipped', async ({
      expect,
    }) => {
      await slot(async () => {
        const { receiver, target } = await startPythonReceiver('none', 'none');
        try {
          const run = await verify('python-none', target);
          expect(
            run.report.summary.failed,
            `failed:\n${byStatus(run.report, 'failed')}\n${run.stderr}\n${receiver.output()}`,
          ).toBe(0);
          expect(run.status, run.stderr).toBe(0);
          expect(byStatus(run.report, 'skipped')).toBe('');
          expect(
            run.report.results.filter(
              (result) =>
                result.id.startsWith('merchant/derived/acknowledged-survives-restart/') && result.status === 'passed',
            ).length,
          ).toBe(12);
          // The first start, pre-flight's proof of --restart, the hand-written restart case and the three durability cases: each a new process.
          expect(receiver.output().match(/LISTENING/g)).toHaveLength(6);
        } finally {
          await receiver.close();
        }
      });
    }, 400_000);

    for (const fault of PYTHON_FAULTS) {
      it(`"${fault.fault}" fails ${fault.row}/${fault.caught} under ${fault.rule}${fault.alone ? '; the hand-written suites alone pass it' : ''}`, async ({
        expect,
      }) => {
        await slot(async () => {
          const { receiver, target } = await startPythonReceiver(fault.fault, fault.fault, fault.config);
          try {
            expectCaughtOnlyWhereRecorded(
              expect,
              fault,
              await judge(fault, target, `python-${fault.fault}`),
              receiver.output(),
              true,
            );
          } finally {
            await receiver.close();
          }
        });
      }, 400_000);
    }
  },
);

describe.skipIf(!JAVA)(
  'derived cases against faulty Java receivers (java not installed: skipped)',
  { concurrent: true },
  () => {
    it('the correct receiver passes the derived suites (the durability row is skipped: it has no restart): exit 0', async ({
      expect,
    }) => {
      await slot(async () => {
        const receiver = await startJavaReceiver([]);
        try {
          const run = await verify('java-none', receiver.target, { suite: 'merchant/derived/*' });
          expect(run.report.summary.failed, byStatus(run.report, 'failed')).toBe(0);
          expect(run.status, run.stderr).toBe(0);
          expect(run.report.summary.passed).toBeGreaterThan(100);
        } finally {
          receiver.stop();
        }
      });
    }, 400_000);

    for (const fault of JAVA_FAULTS) {
      it(`"${fault.fault}" fails ${fault.row}/${fault.caught} under ${fault.rule}${fault.alone ? '; the hand-written suites alone pass it' : ''}`, async ({
        expect,
      }) => {
        await slot(async () => {
          const receiver = await startJavaReceiver([fault.fault]);
          try {
            expectCaughtOnlyWhereRecorded(
              expect,
              fault,
              await judge(fault, receiver.target, `java-${fault.fault}`),
              '',
              false,
            );
          } finally {
            receiver.stop();
          }
        });
      }, 400_000);
    }
  },
);
