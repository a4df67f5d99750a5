/**
 * How the judge turns findings on observed exchanges into report results (docs/decisions/0072-observe-judge.md):
 *
 * - A finding is weighed by `judgeFinding` (src/runner/verdict.ts), the one place a failure gets its
 *   weight, with the side that SENT the bytes as the party under test: a MUST binding the sender
 *   fails, SHOULD and U-* warn unless strict, a MUST binding only the other party warns.
 * - Failed and warning findings are one result each per (check, exchange), with the exchange as
 *   evidence; past `perCheckLimit` of one check and status, further ones are counted into one
 *   aggregate result per check and status (memory stays bounded on a long run).
 * - Passed findings are one aggregate result per check (how many exchanges, first and last seq).
 * - Skipped findings are one aggregate result per check and reason.
 */
import type { Rule } from '../core/rules.js';
import {
  assumptionsOf,
  judgeFinding,
  judgedRules,
  type CheckResult,
  type Finding,
  type Status,
} from '../runner/api.js';

/** The suite name of every observe result. */
const OBSERVE_SUITE = 'observe';

/** Evidence, or how to make it: built only for a result that keeps it (a failure or a warning), once. */
export type Evidence = Record<string, unknown> | (() => Record<string, unknown>);

/** Evidence built at most once, on first use. */
export function lazyEvidence(make: () => Record<string, unknown>): () => Record<string, unknown> {
  let made: Record<string, unknown> | undefined;
  return () => (made ??= make());
}

/** One judgement of one exchange (or of a stream of them), before it is weighed. */
export interface Judgement {
  /** The check's id (a runner check's id where one is reused: `envelope`, `callback-decrypts`). */
  check: string;
  title: string;
  /** The rules the check is labelled with (the finding's own rules win when it names them). */
  labels: string[];
  /** The party that sent the judged bytes: the target of this verdict. */
  side: 'service' | 'merchant';
  finding: Finding;
  /** The exchange's seq, when the judgement is about one exchange. */
  seq?: number;
  /** Evidence (already scrubbed by the caller). */
  evidence?: Evidence;
}

interface Aggregate {
  check: string;
  title: string;
  rules: Set<string>;
  status: Status;
  message: string;
  count: number;
  firstSeq?: number;
  lastSeq?: number;
}

/** Distinct aggregated reasons kept per check and status; further ones are counted into one. */
const MAX_REASONS = 20;

/** Collects results with bounded memory; `results()` gives the report's list. */
export class Tally {
  readonly #individual: CheckResult[] = [];
  readonly #aggregates = new Map<string, Aggregate>();
  readonly #perCheck = new Map<string, number>();
  readonly #ids = new Map<string, number>();
  /** Distinct reasons (aggregates) per check and status, at most MAX_REASONS each. */
  readonly #reasons = new Map<string, number>();
  /** Exchanges never judged, by reason (shed by the judge's queue, cut at the stop): counted, not results. */
  readonly #unjudged = new Map<string, number>();

  constructor(
    private readonly rules: Map<string, Rule>,
    private readonly strict: boolean,
    private readonly perCheckLimit = 200,
  ) {}

  /** Weighs a judgement and keeps it; returns the result when it is one of its own (failed or warning, under the limit). */
  add(judgement: Judgement): CheckResult | undefined {
    const { finding, labels, side } = judgement;
    const { status, message } = judgeFinding(finding, labels, this.rules, this.strict, side);
    const ruleIds = judgedRules(finding, labels);
    if (status === 'passed' || status === 'skipped') {
      this.#aggregate(
        judgement.check,
        judgement.title,
        ruleIds,
        status,
        status === 'passed' ? '' : message,
        judgement.seq,
      );
      return undefined;
    }
    const key = `${judgement.check}\u0000${status}`;
    const n = (this.#perCheck.get(key) ?? 0) + 1;
    this.#perCheck.set(key, n);
    if (n > this.perCheckLimit) {
      this.#aggregate(
        judgement.check,
        judgement.title,
        ruleIds,
        status,
        `more ${status === 'failed' ? 'failures' : 'warnings'} of this check past the first ${this.perCheckLimit} (each listed above); the last: ${message}`,
        judgement.seq,
        true,
      );
      return undefined;
    }
    const where = judgement.seq === undefined ? 'stream' : `seq-${judgement.seq}`;
    // Two findings of one check on one exchange (a request without Content-Type and without a key) are two results: numbered as the engine numbers repeats.
    const base = `${OBSERVE_SUITE}/${where}/${judgement.check}`;
    const repeat = (this.#ids.get(base) ?? 0) + 1;
    this.#ids.set(base, repeat);
    const result: CheckResult = {
      id: repeat > 1 ? `${base}#${repeat}` : base,
      suite: OBSERVE_SUITE,
      case: where,
      title: judgement.title,
      rules: ruleIds,
      status,
      message,
      ...withAssumptions(ruleIds, this.rules),
      ...(judgement.evidence
        ? { evidence: typeof judgement.evidence === 'function' ? judgement.evidence() : judgement.evidence }
        : {}),
    };
    this.#individual.push(result);
    return result;
  }

  #aggregate(
    check: string,
    title: string,
    ruleIds: string[],
    status: Status,
    given: string,
    seq: number | undefined,
    overflow = false,
  ): void {
    let message = given;
    let key = `${check}\u0000${status}\u0000${overflow ? 'overflow' : message}`;
    // A reason that names its event (a forgotten event's id) would make one aggregate per event:
    // past the first reasons of one check and status, the others share one aggregate.
    if (!overflow && !this.#aggregates.has(key)) {
      const kind = `${check}\u0000${status}`;
      const reasons = this.#reasons.get(kind) ?? 0;
      if (reasons >= MAX_REASONS) {
        overflow = true;
        key = `${kind}\u0000other-reasons`;
        message = `not judged for more reasons than the first ${MAX_REASONS} of this check (each listed above); the last: ${given}`;
      } else this.#reasons.set(kind, reasons + 1);
    }
    let entry = this.#aggregates.get(key);
    if (!entry) {
      entry = { check, title, rules: new Set(), status, message, count: 0 };
      this.#aggregates.set(key, entry);
    }
    for (const id of ruleIds) entry.rules.add(id);
    entry.count++;
    if (overflow) entry.message = message;
    if (seq !== undefined) {
      entry.firstSeq ??= seq;
      entry.lastSeq = seq;
    }
  }

  /** Counts `count` exchanges the judge never saw, for `reason` (one entry per reason). */
  unjudged(reason: string, count: number): void {
    if (count > 0) this.#unjudged.set(reason, (this.#unjudged.get(reason) ?? 0) + count);
  }

  /**
   * The judgements not made, grouped by reason (their check's title beside it), most frequent
   * first; then the exchanges not judged at all, by reason (`unit` tells the two apart).
   */
  notJudged(): Array<{ reason: string; count: number; unit: 'judgement' | 'exchange' }> {
    const groups = new Map<string, number>();
    for (const entry of this.#aggregates.values()) {
      if (entry.status !== 'skipped') continue;
      const reason = `${entry.title}: ${entry.message}`;
      groups.set(reason, (groups.get(reason) ?? 0) + entry.count);
    }
    const judgements = [...groups]
      .sort((a, b) => b[1] - a[1])
      .map(([reason, count]) => ({ reason, count, unit: 'judgement' as const }));
    return [
      ...judgements,
      ...[...this.#unjudged].map(([reason, count]) => ({ reason, count, unit: 'exchange' as const })),
    ];
  }

  /** Every result: the individual ones in the order they were settled, then the aggregates. */
  results(): CheckResult[] {
    const aggregates = [...this.#aggregates.values()].map((entry, i): CheckResult => {
      const ruleIds = [...entry.rules];
      const span =
        entry.firstSeq === undefined
          ? ''
          : entry.firstSeq === entry.lastSeq
            ? ` (seq ${entry.firstSeq})`
            : ` (seq ${entry.firstSeq}…${entry.lastSeq})`;
      const count = `${entry.count} judgement${entry.count === 1 ? '' : 's'}${span}`;
      const message = entry.status === 'passed' ? `passed on ${count}` : `${count}: ${entry.message}`;
      const id = `${OBSERVE_SUITE}/all/${entry.check}${entry.status === 'passed' ? '' : `/${entry.status}-${i + 1}`}`;
      return {
        id,
        suite: OBSERVE_SUITE,
        case: 'all',
        title: entry.title,
        rules: ruleIds,
        status: entry.status,
        message,
        ...withAssumptions(ruleIds, this.rules),
        evidence: {
          judgements: entry.count,
          ...(entry.firstSeq === undefined ? {} : { firstSeq: entry.firstSeq, lastSeq: entry.lastSeq }),
        },
      };
    });
    return [...this.#individual, ...aggregates];
  }
}

function withAssumptions(ruleIds: string[], rules: Map<string, Rule>): Pick<CheckResult, 'assumptions'> {
  const assumptions = assumptionsOf(ruleIds, rules);
  return assumptions.length ? { assumptions } : {};
}
