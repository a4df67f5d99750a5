import type { Command } from 'commander';
import type { ObserveIo } from '../observe/conclude.js';
import {
  DEFAULT_JUDGE_CPU_PERCENT,
  DEFAULT_MAX_RECORDED_BODY_BYTES,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
} from '../observe/defaults.js';
import type { ObserveFlags } from './observe-flags.js';
// Registration imports only flags.ts; the flags' checks (observe-flags.ts) and the workflow
// (src/observe/live.ts, replay-run.ts) are imported by the action.
import { addNetworkOptions, secretFileOption, secretOption, sharedOption } from './flags.js';

/** `observe --service-url URL --listen PORT --merchant-url URL --callback-listen PORT --public-key FILE ...` and `observe --replay FILE`. */
export function registerObserveCommand(program: Command): void {
  const command = program
    .command('observe')
    .description(
      'a conformance proxy between a real merchant and a real service: forwards every request and answer unchanged and judges them against the rules as they happen (or judges a capture with --replay)',
    );
  addProxyOptions(command);
  addRunOptions(command);
  addNetworkOptions(command, { runTimeout: false });
  // Observe forwards every body whole; --max-body bounds only what it records of one (memory).
  const maxBody = command.options.find((option) => option.long === '--max-body');
  if (maxBody)
    maxBody.description = `how much of one body is recorded and judged; a longer body is forwarded whole, recorded cut (default ${DEFAULT_MAX_RECORDED_BODY_BYTES})`;
  command.action(async (_given: ObserveFlags, self: Command) => observeAction(self));
}

/** The two sides of the proxy (listeners, upstreams, their TLS) and the keys the judge opens them with. */
function addProxyOptions(command: Command): void {
  command
    .option('--service-url <url>', "the service's {base_url}: requests arriving on --listen go on to it")
    .option(
      '--card-service-url <url>',
      "the service's {card_base_url}, when card close lives elsewhere (default: --service-url)",
    )
    .option(
      '--listen <[host:]port>',
      'where the merchant sends its orders (point its base URL here; host 127.0.0.1 unless given)',
    )
    .option(
      '--listen-tls <file>',
      'serve --listen over HTTPS: a YAML file with a tls: {cert, key, clientCa?} block (as in emulator.yaml)',
    )
    .option(
      '--merchant-url <url>',
      "the merchant's base URL (scheme, host, port): a callback to /PATH on --callback-listen goes on to it with its /PATH",
    )
    .option(
      '--callback-listen <[host:]port>',
      "where the service sends callbacks (point the merchant's callback URL here)",
    )
    .option('--callback-listen-tls <file>', 'serve --callback-listen over HTTPS: a YAML file with a tls: block')
    .addOption(sharedOption('publicKey'))
    .addOption(
      sharedOption('privateKey', 'the private key: opens order requests and callbacks sealed with the public half'),
    )
    .addOption(secretOption('apiKey', "the merchant's X-API-KEY, to judge the key header"))
    .addOption(secretFileOption('apiKey'))
    .addOption(sharedOption('profile'))
    .addOption(sharedOption('reports'));
}

/** What the run keeps (capture, reports), how long it lasts, what it serves beside, or a replay instead. */
function addRunOptions(command: Command): void {
  command
    .option(
      '--capture <file>',
      'also write every exchange to FILE (JSON lines; ciphertext kept, secrets as fingerprints; a new file)',
    )
    .option(
      '--capture-max-mb <mb>',
      'rotate the capture: FILE.000001.jsonl, FILE.000002.jsonl, ... each at most this many MiB and a whole capture of its own',
    )
    .option(
      '--capture-max-age <seconds>',
      'rotate the capture (as --capture-max-mb) once a file has been open this long, at its next exchange',
    )
    .option(
      '--capture-keep <n>',
      'with --capture-max-mb or --capture-max-age: keep the newest N files, delete older ones',
    )
    .option('--duration <seconds>', 'stop after this long (default: on SIGINT or SIGTERM)')
    .option(
      '--metrics <[host:]port>',
      'serve Prometheus metrics at /metrics and a health check at /healthz (host 127.0.0.1 unless given)',
    )
    .option(
      '--ui <[host:]port>',
      'serve a live page of the latest exchanges, their decrypted payloads and verdicts (and /metrics, /healthz); host 127.0.0.1 unless given',
    )
    .option(
      '--report-every <seconds>',
      'also rewrite the four reports every this many seconds while running (and on SIGHUP), each file replaced whole',
    )
    .option(
      '--judge-priority <low|normal>',
      "the judge thread's priority: low (default) judges with the CPU forwarding leaves and counts what it cannot follow as not judged; normal competes with forwarding",
    )
    .option(
      '--judge-cpu <percent>',
      `the share of one core the judge may spend judging, 1 to 100 (default ${DEFAULT_JUDGE_CPU_PERCENT}; a tenth of it while forwarding keeps its thread half busy): past it, exchanges are shed and counted as not judged; forwarding never waits`,
    )
    .option(
      '--upstream-timeout <seconds>',
      `answer 504 when an upstream gives no complete answer within this long (default ${DEFAULT_UPSTREAM_TIMEOUT_MS / 1000})`,
    )
    .option(
      '--replay <files...>',
      'judge capture files offline instead of listening (same output): several files or a glob (FILE.*.jsonl), in order',
    )
    .addOption(sharedOption('strict', 'SHOULD rules and open points fail too'));
}

/** The action of `observe`: settle and check the flags, then observe live or replay (src/observe). */
async function observeAction(self: Command): Promise<void> {
  const { settleFlags, scrubData, scrubOutput } = await import('./secrets.js');
  const { planObserve } = await import('./observe-flags.js');
  const { finish, writeReportFiles } = await import('./report-output.js');
  const { MESSAGE_PREFIX } = await import('../core/errors.js');
  const flags = settleFlags<ObserveFlags>(self, { sections: [], secrets: { apiKey: false } });
  const { live, judge } = planObserve(flags);
  const io: ObserveIo = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    scrubber: { text: scrubOutput, value: scrubData },
    writeReports: (report) => writeReportFiles(report, flags.reports),
    finish: (report) => finish(report, { reports: flags.reports, ...(flags.strict ? { strict: true } : {}) }),
  };
  if (live) {
    const { openCapture } = await import('./capture-files.js');
    const { observeLive } = await import('../observe/live.js');
    const onProblem = (line: string) => io.err(scrubOutput(`${MESSAGE_PREFIX} ${line}\n`));
    const capture = await openCapture(flags.capture, live.capture, onProblem);
    process.exitCode = await observeLive(judge, live, io, capture);
    return;
  }
  const { createJudge } = await import('../observe/judge.js');
  const { observeReplay } = await import('../observe/replay-run.js');
  const { replayFiles } = await import('./capture-files.js');
  const files = replayFiles([flags.replay!].flat());
  // A replay forwards nothing: it judges on this thread.
  process.exitCode = await observeReplay(files, createJudge(judge), flags.apiKey, io);
}
