/**
 * The judge of `wallet-conformance observe`: passive judging of observed exchanges against the
 * rules (spec/rules.yaml), with the verdict model of `verify` (the runner's checks where they fit,
 * the engine's `judgeFinding` for weight, the party that sent the bytes as the party under test).
 * What it can and cannot judge: docs/observe-judging.md; its decisions: docs/decisions/observe-judge.md.
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
import { evidenceOf, judgeKeys } from './observed.js';
import { DEFAULT_LIMITS, Stream, type StreamLimits } from './stream.js';
import { RefusalWatch, type Upstreams } from './refusals.js';
import { lazyEvidence, Tally, type Judgement } from './tally.js';

interface JudgeOptions {
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

/** A judge of observed exchanges (the seam: src/observe/exchange.ts). */
export function createJudge(options: JudgeOptions): Judge {
  const rules = new Map((options.rules ?? packageRules()).map((rule) => [rule.id, rule]));
  const profile = options.profile ?? DEFAULT_PROFILE;
  const keys = judgeKeys(options.keys, profile);
  const limits: StreamLimits = { ...DEFAULT_LIMITS, ...options.limits, maxEvents: options.window ?? DEFAULT_LIMITS.maxEvents };
  const tally = new Tally(rules, options.strict, options.perCheckLimit);
  const stream = new Stream(limits);
  const refusals = new RefusalWatch(options.upstreams);
  const sides = new Set(options.sides ?? ['service', 'merchant']);
  const counts: Record<ObservedExchange['kind'], number> = { energy: 0, withdraw: 0, 'card-close': 0, callback: 0, other: 0 };
  let exchanges = 0;
  let lastSeq = 0;
  let outOfOrder = 0;
  let firstAt: number | undefined;
  let lastAt = 0;
  let finished: ObserveResult | undefined;
  // The rules no traffic shows are settled once, by the first report (interim or final).
  let notObservableSettled = false;

  const settle = (judgements: Judgement[]): ObserveFinding[] => {
    const live: ObserveFinding[] = [];
    for (const judgement of judgements) {
      if (!sides.has(judgement.side)) continue;
      const result = tally.add(judgement);
      if (result) live.push(result);
    }
    return live;
  };

  const judge: Judge = {
    accept(exchange) {
      if (finished) throw new Error('the judge has finished: accept() after finish()');
      exchanges++;
      counts[exchange.kind] = (counts[exchange.kind] ?? 0) + 1;
      if (exchange.seq <= lastSeq) outOfOrder++;
      lastSeq = Math.max(lastSeq, exchange.seq);
      firstAt ??= exchange.startedAt;
      lastAt = Math.max(lastAt, exchange.endedAt);
      const judgements: Judgement[] = [...stream.advance(exchange.startedAt)];
      try {
        if (exchange.kind === 'energy' || exchange.kind === 'withdraw') {
          const judged = judgeOrder(exchange, keys, rules);
          refusals.observe(
            exchange,
            { valid: judged.facts.valid ?? false, refused: judged.facts.refused ?? false, keyCompared: keys.apiKey !== undefined },
            () => evidenceOf(keys, exchange),
          );
          judgements.push(
            ...judged.judgements,
            ...stream.order(
              exchange,
              judged.facts,
              lazyEvidence(() => evidenceOf(keys, exchange)),
            ),
          );
        } else if (exchange.kind === 'card-close') {
          judgements.push(...judgeCardClose(exchange, keys, rules));
        }
        if (exchange.kind === 'card-close' || exchange.kind === 'other') {
          refusals.observe(exchange, { valid: false, refused: false }, () => evidenceOf(keys, exchange));
        }
        if (exchange.kind === 'callback') {
          const judged = judgeCallback(exchange, keys, rules);
          const { facts } = judged;
          // Valid as a receiver sees it: it opens with the keys given and carries the right key (or none was given to compare).
          const valid = facts.payload !== undefined && facts.ownKey !== false;
          refusals.observe(exchange, { valid, refused: facts.ack.verdict === 'not-acknowledged', keyCompared: facts.ownKey !== undefined }, facts.evidence);
          judgements.push(...judged.judgements, ...stream.delivery(exchange, judged.facts));
        }
      } catch (error) {
        // A check never throws for a wrong target; a throw is the judge's bug, reported as such, not a crash.
        judgements.push({
          check: 'judge',
          title: 'the judge could judge the exchange',
          labels: [],
          side: exchange.direction === 'service→merchant' ? 'service' : 'merchant',
          finding: { status: 'failed', message: `the judge could not judge seq ${exchange.seq}: ${(error as Error).message}` },
          seq: exchange.seq,
          evidence: evidenceOf(keys, exchange),
        });
      }
      return settle(judgements);
    },

    snapshot() {
      if (finished) return finished;
      return build(false);
    },

    finish() {
      if (finished) return finished;
      settle(stream.finish());
      settle(refusals.warnings());
      finished = build(true);
      return finished;
    },
  };

  /**
   * The report of what was judged so far. `final` settles nothing itself (finish settled the
   * stream first); before the end, verdicts that wait for later exchanges (a retry, an order
   * callback) are simply not in it yet, and a note says the report is interim.
   */
  function build(final: boolean): ObserveResult {
    if (!notObservableSettled) {
      notObservableSettled = true;
      for (const entry of NOT_OBSERVABLE) {
        const judged = entry.rules.filter((id) => rules.has(id));
        if (judged.length === 0) continue;
        const side = judged.every((id) => rules.get(id)?.binds === 'service') ? 'service' : 'merchant';
        settle([{ check: entry.check, title: entry.title, labels: judged, side, finding: { status: 'skipped', message: entry.why } }]);
      }
    }
    const results = tally.results();
    const count = (status: Status) => results.filter((result: CheckResult) => result.status === status).length;
    const skipped = skipNotes(results, rules);
    const notJudged = tally.notJudged();
    const notes: string[] = [
      `observed ${exchanges} exchange${exchanges === 1 ? '' : 's'}: ${counts.energy} energy, ${counts.withdraw} order, ${counts['card-close']} card close, ${counts.callback} callback, ${counts.other} other (not judged)`,
      ...(stream.forgotten > 0
        ? [
            `${stream.forgotten} event${stream.forgotten === 1 ? ' was' : 's were'} forgotten by the stream window (${limits.maxEvents} events, ${Math.round(limits.maxEventAgeMs / 1000)} s): a resend or retry of one of them after that is judged as a new event`,
          ]
        : []),
      ...(outOfOrder > 0 ? [`${outOfOrder} exchange(s) arrived out of seq order`] : []),
      ...(keys.publicKey === undefined ? ['no public key: answers and callbacks were not opened'] : []),
      ...(keys.privateKey === undefined ? ['no private key: order requests were judged on the wire only (form, Base64, headers), not opened'] : []),
      ...(keys.apiKey === undefined ? ["no API key: the key header was judged present, not compared with the merchant's key (CB-KEY-SAME skipped)"] : []),
      ...(sides.size < 2 ? [`only the ${[...sides].join(' and ')}'s bytes were judged`] : []),
      ...(final ? [] : ['interim report: the run goes on; verdicts that wait for later exchanges (retries, order callbacks) are not in it yet']),
      // What was not judged, by reason, with how many judgements each reason cost (a MUST-only count is in the summary).
      ...notJudged.map((group) => `not judged: ${group.count} judgement${group.count === 1 ? '' : 's'}: ${group.reason}`),
    ];
    const report: Report = {
      target: {
        side: 'observe',
        profile,
        keys: {
          publicKey: keys.publicKey !== undefined,
          privateKey: keys.privateKey !== undefined,
          apiKey: keys.apiKey === undefined ? null : fingerprint(keys.apiKey, 'ak'),
        },
        strict: options.strict,
        window: { events: limits.maxEvents, ageMs: limits.maxEventAgeMs, retryWaitMs: limits.retryWaitMs, orderCallbackWaitMs: limits.orderCallbackWaitMs },
        ...options.target,
      },
      summary: {
        passed: count('passed'),
        failed: count('failed'),
        warnings: count('warning'),
        skipped: count('skipped'),
        durationMs: firstAt === undefined ? 0 : Math.max(0, lastAt - firstAt),
        skippedMust: skipped.skippedMust,
      },
      results,
      notes,
    };
    return { exchanges, report, forgottenEvents: stream.forgotten, notJudged: notJudged.reduce((n, group) => n + group.count, 0) };
  }
  return judge;
}
