// `observe` live: listen, forward every exchange unchanged, judge as it happens on the judge's own
// thread, until a signal or --duration; then the reports. The CLI checks the flags, opens the
// capture files and gives the process's edges (ObserveIo); everything from listening on is here.
import { MESSAGE_PREFIX } from '../core/errors.js';
import { networkNote, type NetworkConfig } from '../net/network-config.js';
import { CaptureWriter, type CaptureSink } from './capture.js';
import { conclude, findingPrinter, type ObserveIo } from './conclude.js';
import type { ObservedExchange, ObserveResult } from './exchange.js';
import type { JudgeOptions } from './judge.js';
import type { JudgePriority } from './judge-protocol.js';
import { JudgeQueue } from './judge-queue.js';
import { exposedListenerWarnings, liveFeed, printAddresses, serveBeside, startProxy } from './live-listen.js';
import { JUDGE_DRAIN_MS, reportWindow, startInterimReports, stopSignals } from './live-stop.js';
import { createObserveMetrics, type ObserveMetrics } from './metrics.js';
import type { ObserveProxy, ProxyListener } from './proxy.js';
import type { LiveFeed } from './ui/feed.js';

/** A live observation, every flag checked (the CLI's work). */
export interface LivePlan {
  listeners: ProxyListener[];
  /** The judge thread's priority (--judge-priority; decision 0116): low unless asked otherwise. */
  judgePriority: JudgePriority;
  /** The share of one core the judge may spend judging (--judge-cpu; decision 0121), 0 < share ≤ 1. */
  judgeCpuShare: number;
  durationMs?: number;
  upstreamTimeoutMs: number;
  /** Where /metrics and /healthz are served (--metrics). */
  metrics?: { host: string; port: number };
  /** Where the live page is served, with /metrics and /healthz (--ui). */
  ui?: { host: string; port: number };
  /** Reports rewritten while running, every this many ms (--report-every). */
  reportEveryMs?: number;
  network: NetworkConfig;
}

/** The capture the CLI opened for --capture: one new file, or the first of a rotating series. */
export interface LiveCapture {
  /** The file as given with --capture. */
  path: string;
  sink: CaptureSink & { end(done: () => void): void };
  /** A rotating capture (--capture-max-mb, --capture-max-age): the files written so far, in order. */
  rotating?: { readonly files: readonly string[] };
}

/** What the judge's thread reports to: findings as settled, a failure on one exchange, a shed exchange. */
type JudgeHooks = Parameters<typeof JudgeQueue.start>[1];

/** The judge's thread behind its bounded queue: the one place a live observation starts it. */
function startJudge(
  judge: JudgeOptions,
  hooks: JudgeHooks,
  plan: Pick<LivePlan, 'judgePriority' | 'judgeCpuShare'>,
): JudgeQueue {
  return JudgeQueue.start(judge, { ...hooks, priority: plan.judgePriority, cpuShare: plan.judgeCpuShare });
}

/** What runs beside the proxy, each optional: the capture, the metrics, the live page. */
interface Beside {
  capture: CaptureWriter | undefined;
  metrics: ObserveMetrics | undefined;
  page: LiveFeed | undefined;
}

/**
 * Starts the judge, then the proxy once the judge is made (an exchange never waits for the thread
 * to load), and prints the addresses. Each exchange goes to the capture at once, to the metrics
 * and the page, and to the judge's queue; judging runs on its own thread (judge-queue.ts).
 */
async function startForwarding(
  judgeOptions: JudgeOptions,
  plan: LivePlan,
  io: ObserveIo,
  beside: Beside,
  stream: LiveCapture['sink'] | undefined,
): Promise<{ queue: JudgeQueue; proxy: ObserveProxy; printer: ReturnType<typeof findingPrinter> }> {
  const printer = findingPrinter(io);
  const { capture, metrics, page } = beside;
  const judgeFailed = (error: unknown) =>
    io.err(
      io.scrubber.text(
        `${MESSAGE_PREFIX} observe: the judge failed on an exchange (forwarding goes on): ${(error as Error)?.message ?? String(error)}\n`,
      ),
    );
  const queue = startJudge(
    judgeOptions,
    {
      onFindings: (findings) => {
        metrics?.findings(findings);
        page?.findings(findings);
        printer.print(findings);
      },
      onError: judgeFailed,
      onShed: () => metrics?.notJudged('shed'),
    },
    plan,
  );
  await queue.ready();
  const onExchange = (exchange: ObservedExchange) => {
    capture?.write(exchange);
    metrics?.exchange(exchange);
    page?.exchange(exchange);
    queue.submit(exchange);
  };
  const proxy = await startProxy(plan, onExchange, judgeFailed, stream);
  printAddresses(proxy, io);
  for (const line of exposedListenerWarnings(plan.listeners)) io.err(`${line}\n`);
  return { queue, proxy, printer };
}

/** The files of a rotated capture, for the end line. */
function rotatedFiles(files: readonly string[]): string {
  return files.length === 1 ? files[0]! : `${files[0]} … ${files[files.length - 1]}`;
}

/** The end's lines on what was not judged and on the capture (closed here), and the report's `observe`. */
async function endCounts(
  proxy: ObserveProxy,
  notJudged: number,
  cut: number,
  captured: { writer: CaptureWriter; file: LiveCapture } | undefined,
): Promise<{ lines: string[]; observed: Record<string, unknown> }> {
  const lines: string[] = [];
  if (cut > 0) lines.push(`observe: ${cut} exchanges still in flight at the stop were cut (not judged)`);
  if (notJudged > 0)
    lines.push(
      `observe: ${notJudged} exchanges not judged: the judge fell behind or the stop came first (its queue is bounded; the capture holds them)`,
    );
  const rotating = captured?.file.rotating;
  if (captured) {
    const { writer, file } = captured;
    await writer.close();
    lines.push(
      `capture: ${rotating ? rotatedFiles(rotating.files) : file.path} (${rotating && rotating.files.length > 1 ? `${rotating.files.length} files, ` : ''}${writer.written} exchanges${writer.dropped > 0 ? `; ${writer.dropped} not written: the disk fell behind` : ''})`,
    );
  }
  const observed = {
    listeners: proxy.addresses.map((address) => ({
      direction: address.direction,
      listen: address.url,
      upstream: address.upstream,
      ...(address.cardUpstream ? { cardUpstream: address.cardUpstream } : {}),
    })),
    ...(captured
      ? {
          capture: captured.file.path,
          captured: captured.writer.written,
          ...(captured.writer.dropped ? { notCaptured: captured.writer.dropped } : {}),
        }
      : {}),
    ...(rotating ? { captureFiles: rotating.files.length } : {}),
    ...(notJudged > 0 ? { notJudged } : {}),
    ...(cut > 0 ? { cut } : {}),
  };
  return { lines, observed };
}

/**
 * A live observation from start to end: returns the exit status once the reports are written.
 * Signals are taken until then: a signal during the writing does not lose them.
 */
export async function observeLive(
  judgeOptions: JudgeOptions,
  plan: LivePlan,
  io: ObserveIo,
  file: LiveCapture | undefined,
): Promise<number> {
  const writer = file ? new CaptureWriter(file.sink, io.scrubber) : undefined;
  const metrics = plan.metrics || plan.ui ? createObserveMetrics() : undefined;
  const page = plan.ui ? liveFeed(judgeOptions.keys, judgeOptions.profile, io) : undefined;
  const { queue, proxy, printer } = await startForwarding(
    judgeOptions,
    plan,
    io,
    { capture: writer, metrics, page },
    file?.sink,
  );
  const servers = await serveBeside(metrics, page, plan, proxy, io);
  const startedAt = Date.now();
  const interim = startInterimReports(
    {
      snapshot: () => queue.snapshot(),
      startedAt,
      ...(plan.reportEveryMs === undefined ? {} : { everyMs: plan.reportEveryMs }),
      target: () => ({ observe: { ...(queue.notJudged > 0 ? { notJudged: queue.notJudged } : {}) } }),
    },
    io,
  );
  const signals = stopSignals(plan.durationMs, io.err);
  await signals.stopped;
  interim.stop();
  await servers.close();
  const { cut } = await proxy.close({ signal: signals.cut });
  const result: ObserveResult = await queue.close({ deadline: Date.now() + JUDGE_DRAIN_MS, signal: signals.cut, cut });
  const captured = writer && file ? { writer, file } : undefined;
  const { lines, observed } = await endCounts(proxy, queue.notJudged, cut, captured);
  const window = reportWindow(result.report.target, startedAt, Date.now(), true);
  const status = conclude(
    result,
    io,
    printer,
    { observe: observed, window, ...networkNote(plan.network, observed) },
    lines,
  );
  signals.release();
  return status;
}
