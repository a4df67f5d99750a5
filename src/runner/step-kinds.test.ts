import { describe, expect, it, vi } from 'vitest';
import { merchantTarget, serviceTarget, testKeys } from '../../test/support/check-context.js';
import {
  expectedProcessings,
  graceMs,
  settleLimit,
  producedBy,
  routesOfStep,
  runStep,
  STEP_KINDS,
  stepKindOf,
  stepNeedsReceiver,
  type CaseState,
} from './step-kinds.js';
import type { Transport } from './transport.js';
import { defaultNetwork } from '../net/network-config.js';
import { openRun } from './run-context.js';
import type { Step } from './suite.js';

const state = (): CaseState => ({
  scope: { caseId: 'c', saved: {} },
  stranger: { privateKey: testKeys, publicKey: testKeys.publicKey },
  receiver: undefined,
  spelling: 'interface',
  events: new Map(),
  caseEvents: new Set(),
  lastProbe: undefined,
  prompt: () => undefined,
  run: openRun(defaultNetwork()),
});

describe('the step-kind registry: one entry per kind', () => {
  it("lists the six kinds of suite.schema.json, in the order a step's keys are tried", () => {
    expect(Object.keys(STEP_KINDS)).toEqual(['request', 'control', 'emit', 'await', 'deliver', 'restart']);
    expect(Object.entries(STEP_KINDS).map(([kind, entry]) => `${kind}:${entry.side}`)).toEqual([
      'request:service',
      'control:service',
      'emit:service',
      'await:service',
      'deliver:merchant',
      'restart:merchant',
    ]);
  });

  it.each<[string, Step, string | undefined, string[], boolean, string[]]>([
    ['a request', { request: { endpoint: 'energy' } }, 'request', [], false, ['exchange']],
    [
      'an energy setting',
      { control: { energy: { balance: 1, costPerTx: 1 } } },
      'control',
      ['PUT energy'],
      false,
      ['exchange'],
    ],
    [
      'a card registration',
      { control: { card: { powerCardId: 'p', merchantUserId: 'm' } } },
      'control',
      ['POST cards'],
      false,
      ['exchange'],
    ],
    [
      'pointing callbacks at the runner',
      { control: { pointCallbacks: true } },
      'control',
      ['PUT callback-url'],
      true,
      ['exchange'],
    ],
    [
      'an emitted callback',
      { emit: { type: 1 } },
      'emit',
      ['PUT callback-url', 'POST callbacks', 'GET deliveries'],
      true,
      ['exchange', 'callbacks'],
    ],
    ['an awaited callback', { await: { type: 3 } }, 'await', [], true, ['exchange', 'callbacks']],
    ['a delivery', { deliver: { type: 1 } }, 'deliver', [], false, ['exchange', 'probe']],
    ['a restart', { restart: true }, 'restart', [], false, []],
    ['a step of no kind', { title: 'nothing' }, undefined, [], false, []],
  ])(
    'knows %s: its kind, control routes, receiver and what it produces',
    (_label, step, kind, routes, receiver, produces) => {
      expect([stepKindOf(step), routesOfStep(step), stepNeedsReceiver(step), producedBy(step)]).toEqual([
        kind,
        routes,
        receiver,
        produces,
      ]);
    },
  );

  it.each<[string, Step, typeof serviceTarget | typeof merchantTarget]>([
    ['a delivery against a service', { deliver: { type: 1 } }, serviceTarget],
    ['a request against a merchant', { request: { endpoint: 'energy' } }, merchantTarget],
    ["an emitted callback without the runner's receiver", { emit: { type: 1 } }, serviceTarget],
    ["pointing callbacks without the runner's receiver", { control: { pointCallbacks: true } }, serviceTarget],
    ['a step of no kind', {}, serviceTarget],
  ])('refuses to run %s, as a suite error, without touching the target', async (_label, step, target) => {
    expect(await runStep(step, target, state())).toEqual({
      exchanges: [],
      fault: { blame: 'suite', message: `this step does not apply to a ${target.side}` },
    });
  });
});

describe('a deliver step settles: processing may end after the answer', () => {
  /** A merchant over an in-process transport: answers errCode 0 at once and books each delivery (only the first: `dedupe`) `bookMs` later (-1: never). */
  const lateMerchant = (bookMs: number, dedupe = false) => {
    const processed: string[] = [];
    let probeReads = 0;
    let deliveries = 0;
    const transport: Transport = {
      async send(request) {
        if (request.method === 'GET' && new URL(request.url).pathname === '/probe') {
          probeReads++;
          return {
            status: 200,
            headers: {} as Record<string, string>,
            body: Buffer.from(JSON.stringify({ processed: processed.map((text) => JSON.parse(text) as unknown) })),
            durationMs: 0,
          };
        }
        const book = () => processed.push('{"booked":true}');
        const first = deliveries++ === 0;
        if ((first || !dedupe) && bookMs === 0) book();
        else if ((first || !dedupe) && bookMs > 0) setTimeout(book, bookMs);
        return {
          status: 200,
          headers: { 'content-type': 'application/json' } as Record<string, string>,
          body: Buffer.from('{"errCode":0}'),
          durationMs: 0,
        };
      },
    };
    return {
      target: { ...merchantTarget, probeUrl: 'http://127.0.0.1:9/probe', transport, settleMs: 1000 },
      reads: () => probeReads,
    };
  };
  const deliver = (count: number, event: Record<string, unknown> = { type: 1, event: 'first' }): Step => ({
    deliver: event,
    expect: [{ check: 'processed', count }],
  });
  /**
   * Runs a step on a fake clock (timers and `performance.now`) and returns how much of that clock it
   * waited: the settle waits are measured in the step's own time, never the machine's.
   */
  const timed = async (run: () => Promise<unknown>) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const started = performance.now();
      const running = run();
      await vi.runAllTimersAsync();
      const result = await running;
      return { result, ms: performance.now() - started };
    } finally {
      vi.useRealTimers();
    }
  };

  it('reads the probe once after the answer when the processing is already there: a fast receiver pays nothing', async () => {
    const merchant = lateMerchant(0, true);
    const s = state();
    const ran = await runStep(deliver(1), merchant.target, s);
    expect([ran.processed, merchant.reads(), s.lateMs]).toEqual([['{"booked":true}'], 2, undefined]);
    // The duplicate: nothing was late, so no grace before the one read.
    const { result, ms } = await timed(() => runStep(deliver(0, { same: 'first' }), merchant.target, s));
    expect([(result as { processed?: string[] }).processed, merchant.reads(), ms]).toEqual([[], 3, 0]);
  });

  it('reads again until a processing booked 300 ms after the answer shows, and remembers it was late', async () => {
    const merchant = lateMerchant(300);
    const s = state();
    const { result, ms } = await timed(() => runStep(deliver(1), merchant.target, s));
    // Read at the answer and every 100 ms: the read at 300 ms finds it.
    expect([(result as { processed?: string[] }).processed, ms, s.lateMs]).toEqual([['{"booked":true}'], 300, 300]);
  });

  it('waits a grace before judging a duplicate when the original was late, so a duplicate booked late is counted (CB-ONCE)', async () => {
    const merchant = lateMerchant(300);
    const s = state();
    await timed(() => runStep(deliver(1), merchant.target, s));
    // This merchant books every delivery again (no deduplication), 300 ms after answering.
    const { result, ms } = await timed(() => runStep(deliver(0, { same: 'first' }), merchant.target, s));
    // The grace is twice the original's lateness: 600 ms, past the duplicate's booking at 300 ms.
    expect([(result as { processed?: string[] }).processed, ms]).toEqual([['{"booked":true}'], 600]);
  });

  it('gives up at the settle limit when the processing never shows', async () => {
    const merchant = lateMerchant(-1);
    const s = state();
    const { result, ms } = await timed(() => runStep(deliver(1), merchant.target, s));
    expect([(result as { processed?: string[] }).processed, ms, s.lateMs]).toEqual([[], 1000, undefined]);
  });

  it('reads once with --settle-ms 0', async () => {
    const merchant = lateMerchant(300);
    const ran = await runStep(deliver(1), { ...merchant.target, settleMs: 0 }, state());
    expect([ran.processed, merchant.reads()]).toEqual([[], 2]);
  });
});

describe('what a deliver step waits for', () => {
  it.each<[string, Step, number | undefined]>([
    ['no probe check', { deliver: { type: 1 }, expect: [{ check: 'answers', errCode: 'zero' }] }, undefined],
    ['a processed count', { deliver: { type: 1 }, expect: [{ check: 'processed', count: 3 }] }, 3],
    ['a duplicate', { deliver: { type: 1 }, expect: [{ check: 'processed', count: 0 }] }, 0],
    ['processed-exact alone: at least one', { deliver: { type: 1 }, expect: [{ check: 'processed-exact' }] }, 1],
    [
      'both: the larger',
      { deliver: { type: 1 }, expect: [{ check: 'processed', count: 2 }, { check: 'processed-exact' }] },
      2,
    ],
  ])('expects %s', (_label, step, expected) => {
    expect(expectedProcessings(step)).toBe(expected);
  });

  it.each<[number | undefined, number, number]>([
    [undefined, 2000, 0],
    [50, 2000, 200],
    [350, 2000, 700],
    [1500, 2000, 2000],
    [350, 0, 0],
  ])('waits a grace of %s ms late with a %s ms limit: %s ms', (late, limit, grace) => {
    expect(graceMs(late, limit)).toBe(grace);
  });

  it.each<[string, { late: boolean; missed: number } | undefined, number, number]>([
    ['a first wait', undefined, 2000, 2000],
    ['one wait ran out', { late: false, missed: 1 }, 2000, 2000],
    ['two waits ran out, never late: short', { late: false, missed: 2 }, 2000, 200],
    ['two waits ran out, once late: the whole limit', { late: true, missed: 5 }, 2000, 2000],
    ['a limit below the short one stays', { late: false, missed: 3 }, 100, 100],
  ])('settles for %s: %o with a %s ms limit waits %s ms', (_label, history, limit, expected) => {
    expect(settleLimit(history, limit)).toBe(expected);
  });
});
