/**
 * The judge of `wallet-conformance observe`: passive judging of observed exchanges against the
 * rules (spec/rules.yaml), with the verdict model of `verify` (the runner's checks where they fit,
 * the engine's `judgeFinding` for weight, the party that sent the bytes as the party under test).
 * What it can and cannot judge: docs/observe-judging.md; its decisions: docs/decisions/0072-observe-judge.md.
 */
import { readFileSync } from 'node:fs';
import { RULES_PATH } from '../platform/package-paths.js';
import { DEFAULT_PROFILE, type CryptoProfile } from '../core/profile.js';
import { parseRuleCatalog, type Rule } from '../core/rules.js';
import { fingerprint } from '../secrets/scrub.js';
import { skipNotes, type CheckResult, type Report, type Status } from '../runner/api.js';
import type { Judge, ObserveFinding, ObserveKeys, ObserveResult, ObservedExchange } from './exchange.js';
import { judgeCallback } from './judge-callbacks.js';
import { judgeCardClose, judgeOrder } from './judge-orders.js';
import { evidenceOf, judgeKeys, type JudgeKeys } from './observed.js';
import { DEFAULT_LIMITS, Stream, type StreamLimits } from './stream.js';
import { RefusalWatch, type Upstreams } from './refusals.js';
import { lazyEvidence, Tally, type Judgement } from './tally.js';

export interface JudgeOptions {
  keys: ObserveKeys;
  strict: boolean;
  profile?: CryptoProfile;
  /** Events the stream remembers at most (default 10,000); older ones are forgotten and counted. */
  window?: number;
  /** Observed-time waits and the event age limit (ms); see StreamLimits. */
  limits?: Partial<Omit<StreamLimits, 'maxEvents'>>;
  /** The rule catalog (default: the package's spec/rules.yaml). */
  rules?: Rule[];
  /** Whose bytes are judged (default both): `verify merchant --replay` judges the merchant only. */
  sides?: ReadonlyArray<'service' | 'merchant'>;
  /** Individual failed/warning results kept per check before further ones are counted (default 200). */
  perCheckLimit?: number;
  /** What the report's `target` says, besides the judge's own settings. */
  target?: Record<string, unknown>;
  /** The URLs observe forwards to (live), named by a warning when a side answers nothing but 404/5xx. */
  upstreams?: Upstreams;
}

/**
 * Rules no traffic shows: they need to see inside the merchant (what it processed, in what order)
 * or the service's books. Reported `skipped`, never passed.
 */
const NOT_OBSERVABLE: ReadonlyArray<{ check: string; title: string; rules: string[]; why: string }> = [
  {
    check: 'processed-once',
    title: 'the merchant processes each identical event once',
    rules: ['CB-ONCE', 'CB-DUP-ACK'],
    why: 'not observable from traffic: whether the merchant processed an event (once, twice, not at all) is inside the merchant; `verify merchant` with a probe judges it',
  },
  {
    check: 'idempotency-keys',
    title: "the merchant's idempotency keys",
    rules: ['CB-ID-DEPOSIT', 'CB-ID-WITHDRAW'],
    why: 'not observable from traffic: which fields the merchant keys an event on shows only in what it processes; `verify merchant` with a probe judges it',
  },
  {
    check: 'key-first',
    title: 'the merchant checks X-API-KEY before any other processing',
    rules: ['CB-KEY-FIRST'],
    why: "not observable from traffic: the order of the merchant's checks shows only with a bad key and a broken body together, or in what it processed",
  },
  {
    check: 'energy-floor',
    title: 'energyMaxCount is the floor of the live balance over the cost',
    rules: ['ENERGY-FLOOR'],
    why: "not observable from traffic: the merchant's balance and cost per transaction are inside the service",
  },
];

/** The package's rule catalog. */
function packageRules(): Rule[] {
  return parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
}

/** Everything one judge holds: its settings, its memory, its counts. */
interface JudgeState {
  options: JudgeOptions;
  rules: Map<string, Rule>;
  profile: CryptoProfile;
  keys: JudgeKeys;
  limits: StreamLimits;
  tally: Tally;
  stream: Stream;
  refusals: RefusalWatch;
  sides: Set<'service' | 'merchant'>;
  counts: Record<ObservedExchange['kind'], number>;
  exchanges: number;
  lastSeq: number;
  outOfOrder: number;
  firstAt: number | undefined;
  lastAt: number;
  /** The rules no traffic shows are settled once, by the first report (interim or final). */
  notObservableSettled: boolean;
}

function judgeState(options: JudgeOptions): JudgeState {
  const rules = new Map((options.rules ?? packageRules()).map((rule) => [rule.id, rule]));
  const profile = options.profile ?? DEFAULT_PROFILE;
  const limits: StreamLimits = {
    ...DEFAULT_LIMITS,
    ...options.limits,
    maxEvents: options.window ?? DEFAULT_LIMITS.maxEvents,
  };
  return {
    options,
    rules,
    profile,
    keys: judgeKeys(options.keys, profile),
    limits,
    tally: new Tally(rules, options.strict, options.perCheckLimit),
    stream: new Stream(limits),
    refusals: new RefusalWatch(options.upstreams),
    sides: new Set(options.sides ?? ['service', 'merchant']),
    counts: { energy: 0, withdraw: 0, 'card-close': 0, callback: 0, other: 0 },
    exchanges: 0,
    lastSeq: 0,
    outOfOrder: 0,
    firstAt: undefined,
    lastAt: 0,
    notObservableSettled: false,
  };
}

/** Weighs judgements of the sides judged; returns those that are results of their own (failed, warning). */
function settle(state: JudgeState, judgements: Judgement[]): ObserveFinding[] {
  const live: ObserveFinding[] = [];
  for (const judgement of judgements) {
    if (!state.sides.has(judgement.side)) continue;
    const result = state.tally.add(judgement);
    if (result) live.push(result);
  }
  return live;
}

/** An order request (energy, withdrawal) and its answer, then the stream's memory of it. */
function judgeOrderExchange({ keys, rules, refusals, stream }: JudgeState, exchange: ObservedExchange): Judgement[] {
  const judged = judgeOrder(exchange, keys, rules);
  const { facts } = judged;
  refusals.observe(
    exchange,
    { valid: facts.valid ?? false, refused: facts.refused ?? false, keyCompared: keys.apiKey !== undefined },
    () => evidenceOf(keys, exchange),
  );
  return [
    ...judged.judgements,
    ...stream.order(
      exchange,
      facts,
      lazyEvidence(() => evidenceOf(keys, exchange)),
    ),
  ];
}

/** A callback delivery and the merchant's answer, then the stream's memory of it. */
function judgeDelivery({ keys, rules, refusals, stream }: JudgeState, exchange: ObservedExchange): Judgement[] {
  const judged = judgeCallback(exchange, keys, rules);
  const { facts } = judged;
  // Valid as a receiver sees it: it opens with the keys given and carries the right key (or none was given to compare).
  const valid = facts.payload !== undefined && facts.ownKey !== false;
  refusals.observe(
    exchange,
    { valid, refused: facts.ack.verdict === 'not-acknowledged', keyCompared: facts.ownKey !== undefined },
    facts.evidence,
  );
  return [...judged.judgements, ...stream.delivery(exchange, facts)];
}

/** The judgements of one exchange, by its kind. */
function judgeByKind(state: JudgeState, exchange: ObservedExchange): Judgement[] {
  const { keys, rules, refusals } = state;
  switch (exchange.kind) {
    case 'energy':
    case 'withdraw':
      return judgeOrderExchange(state, exchange);
    case 'callback':
      return judgeDelivery(state, exchange);
    case 'card-close': {
      const judged = judgeCardClose(exchange, keys, rules);
      refusals.observe(exchange, { valid: false, refused: false }, () => evidenceOf(keys, exchange));
      return judged;
    }
    default:
      refusals.observe(exchange, { valid: false, refused: false }, () => evidenceOf(keys, exchange));
      return [];
  }
}

/** Counts one exchange and judges it; a throw is the judge's bug, reported as a failed result, not a crash. */
function accept(state: JudgeState, exchange: ObservedExchange): ObserveFinding[] {
  state.exchanges++;
  state.counts[exchange.kind] = (state.counts[exchange.kind] ?? 0) + 1;
  if (exchange.seq <= state.lastSeq) state.outOfOrder++;
  state.lastSeq = Math.max(state.lastSeq, exchange.seq);
  state.firstAt ??= exchange.startedAt;
  state.lastAt = Math.max(state.lastAt, exchange.endedAt);
  const judgements: Judgement[] = [...state.stream.advance(exchange.startedAt)];
  try {
    judgements.push(...judgeByKind(state, exchange));
  } catch (error) {
    // A check never throws for a wrong target; a throw is the judge's bug, reported as such, not a crash.
    judgements.push({
      check: 'judge',
      title: 'the judge could judge the exchange',
      labels: [],
      side: exchange.direction === 'service→merchant' ? 'service' : 'merchant',
      finding: {
        status: 'failed',
        message: `the judge could not judge seq ${exchange.seq}: ${(error as Error).message}`,
      },
      seq: exchange.seq,
      evidence: evidenceOf(state.keys, exchange),
    });
  }
  return settle(state, judgements);
}

/** A judge of observed exchanges (the seam: src/observe/exchange.ts). */
export function createJudge(options: JudgeOptions): Judge {
  const state = judgeState(options);
  let finished: ObserveResult | undefined;
  return {
    accept(exchange) {
      if (finished) throw new Error('the judge has finished: accept() after finish()');
      return accept(state, exchange);
    },
    unjudged(reason, count) {
      if (!finished) state.tally.unjudged(reason, count);
    },
    snapshot() {
      return finished ?? build(state, false);
    },
    finish() {
      if (finished) return finished;
      settle(state, state.stream.finish());
      settle(state, state.refusals.warnings());
      finished = build(state, true);
      return finished;
    },
  };
}

/** The rules no traffic shows, settled `skipped` once. */
function settleNotObservable(state: JudgeState): void {
  if (state.notObservableSettled) return;
  state.notObservableSettled = true;
  for (const entry of NOT_OBSERVABLE) {
    const judged = entry.rules.filter((id) => state.rules.has(id));
    if (judged.length === 0) continue;
    const side = judged.every((id) => state.rules.get(id)?.binds === 'service') ? 'service' : 'merchant';
    settle(state, [
      {
        check: entry.check,
        title: entry.title,
        labels: judged,
        side,
        finding: { status: 'skipped', message: entry.why },
      },
    ]);
  }
}

/** The report's notes: what was observed, what the judge could not open or remember, what was not judged. */
function notesOf(state: JudgeState, final: boolean, notJudged: ReturnType<Tally['notJudged']>): string[] {
  const { exchanges, counts, stream, limits, keys, sides } = state;
  return [
    `observed ${exchanges} exchange${exchanges === 1 ? '' : 's'}: ${counts.energy} energy, ${counts.withdraw} order, ${counts['card-close']} card close, ${counts.callback} callback, ${counts.other} other (not judged)`,
    ...(stream.forgotten > 0
      ? [
          `${stream.forgotten} event${stream.forgotten === 1 ? ' was' : 's were'} forgotten by the stream window (${limits.maxEvents} events, ${Math.round(limits.maxEventAgeMs / 1000)} s): a resend or retry of one of them after that is judged as a new event`,
        ]
      : []),
    ...(state.outOfOrder > 0 ? [`${state.outOfOrder} exchange(s) arrived out of seq order`] : []),
    ...(keys.publicKey === undefined ? ['no public key: answers and callbacks were not opened'] : []),
    ...(keys.privateKey === undefined
      ? ['no private key: order requests were judged on the wire only (form, Base64, headers), not opened']
      : []),
    ...(keys.apiKey === undefined
      ? ["no API key: the key header was judged present, not compared with the merchant's key (CB-KEY-SAME skipped)"]
      : []),
    ...(sides.size < 2 ? [`only the ${[...sides].join(' and ')}'s bytes were judged`] : []),
    ...(final
      ? []
      : [
          'interim report: the run goes on; verdicts that wait for later exchanges (retries, order callbacks) are not in it yet',
        ]),
    // What was not judged, by reason, with how many judgements each reason cost (a MUST-only count is in the summary).
    ...notJudged.map(
      (group) => `not judged: ${group.count} ${group.unit}${group.count === 1 ? '' : 's'}: ${group.reason}`,
    ),
  ];
}

/**
 * The report of what was judged so far. `final` settles nothing itself (finish settled the
 * stream first); before the end, verdicts that wait for later exchanges (a retry, an order
 * callback) are simply not in it yet, and a note says the report is interim.
 */
function build(state: JudgeState, final: boolean): ObserveResult {
  settleNotObservable(state);
  const { keys, limits, options } = state;
  const results = state.tally.results();
  const count = (status: Status) => results.filter((result: CheckResult) => result.status === status).length;
  const skipped = skipNotes(results, state.rules);
  const notJudged = state.tally.notJudged();
  const report: Report = {
    target: {
      side: 'observe',
      profile: state.profile,
      keys: {
        publicKey: keys.publicKey !== undefined,
        privateKey: keys.privateKey !== undefined,
        apiKey: keys.apiKey === undefined ? null : fingerprint(keys.apiKey, 'ak'),
      },
      strict: options.strict,
      window: {
        events: limits.maxEvents,
        ageMs: limits.maxEventAgeMs,
        retryWaitMs: limits.retryWaitMs,
        orderCallbackWaitMs: limits.orderCallbackWaitMs,
      },
      ...options.target,
    },
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
      durationMs: state.firstAt === undefined ? 0 : Math.max(0, state.lastAt - state.firstAt),
      skippedMust: skipped.skippedMust,
    },
    results,
    notes: notesOf(state, final, notJudged),
  };
  return {
    exchanges: state.exchanges,
    report,
    forgottenEvents: state.stream.forgotten,
    notJudged: notJudged.reduce((n, group) => n + group.count, 0),
  };
}
