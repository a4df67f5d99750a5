/**
 * What one side did to everything it was sent, judged at the end of an observation: a side that
 * refused every valid request or delivery (it opens with the keys given, it carries the right key)
 * and a side that answered 404 or 5xx (or nothing) to every exchange. Neither proves which rule was
 * broken, so each is a warning that names the rule such a refusal suggests, or the likely
 * misconfiguration, with the first exchanges as evidence (docs/decisions/0105-observe-refuses-everything.md).
 */
import type { ObservedExchange } from './exchange.js';
import type { Evidence, Judgement } from './tally.js';

/** Fewer valid exchanges than this are not "every one": a refusal or two is ordinary business. */
const MIN_EXCHANGES = 3;

/** Exchanges kept as evidence for each warning. */
const EVIDENCE_KEPT = 3;

type Direction = ObservedExchange['direction'];

/** The URL observe forwards each direction to (`--merchant-url`, `--service-url`), when known (live). */
export type Upstreams = Partial<Record<Direction, string>>;

interface Watch {
  valid: number;
  validRefused: number;
  /** Of the refused valid ones, those refused with HTTP 401 (the key check). */
  keyRefused: number;
  /** Of the refused valid ones, those answered 404 or not at all: they say where, not how, the side reads. */
  notFound: number;
  /** Of the valid ones, those whose key was compared with the configured one. */
  keyCompared: number;
  refusedEvidence: Evidence[];
  total: number;
  /** Answered 404, 5xx, or not at all (the upstream failed). */
  dead: number;
  deadStatuses: Set<string>;
  deadEvidence: Evidence[];
}

const newWatch = (): Watch => ({
  valid: 0,
  validRefused: 0,
  keyRefused: 0,
  notFound: 0,
  keyCompared: 0,
  refusedEvidence: [],
  total: 0,
  dead: 0,
  deadStatuses: new Set(),
  deadEvidence: [],
});

/** Each direction's side and words. */
const SIDES: Record<Direction, { side: 'service' | 'merchant'; what: string; flag: string; deadRules: string[] }> = {
  'service→merchant': { side: 'merchant', what: 'callbacks', flag: '--merchant-url', deadRules: ['CB-AVAILABLE'] },
  'merchant→service': {
    side: 'service',
    what: 'order requests',
    flag: '--service-url',
    deadRules: ['ORDER-PATH', 'ENERGY-PATH'],
  },
};

/** Watches both directions; `warnings()` at the end. */
export class RefusalWatch {
  readonly #watches: Record<Direction, Watch> = { 'service→merchant': newWatch(), 'merchant→service': newWatch() };

  constructor(private readonly upstreams: Upstreams = {}) {}

  /**
   * One exchange: `valid` when the judge found nothing wrong with what was sent (it opened with the
   * keys given, it carried the right key); `refused` when the receiving side did not accept it.
   */
  observe(
    exchange: ObservedExchange,
    facts: { valid: boolean; refused: boolean; keyCompared?: boolean },
    evidence: Evidence,
  ): void {
    const watch = this.#watches[exchange.direction];
    watch.total++;
    const status = exchange.response?.status;
    if (status === undefined || status === 404 || status >= 500) {
      watch.dead++;
      watch.deadStatuses.add(
        status === undefined
          ? `no answer (${exchange.upstreamError?.message ?? 'the upstream failed'})`
          : `HTTP ${status}`,
      );
      if (watch.deadEvidence.length < EVIDENCE_KEPT) watch.deadEvidence.push(evidence);
    }
    if (!facts.valid) return;
    watch.valid++;
    if (facts.keyCompared) watch.keyCompared++;
    if (!facts.refused) return;
    watch.validRefused++;
    if (status === 401) watch.keyRefused++;
    if (status === undefined || status === 404) watch.notFound++;
    if (watch.refusedEvidence.length < EVIDENCE_KEPT) watch.refusedEvidence.push(evidence);
  }

  /** The warnings the whole observation supports. */
  warnings(): Judgement[] {
    return (Object.keys(this.#watches) as Direction[]).flatMap((direction) => [
      ...this.#answersNothing(direction),
      ...this.#refusesEverything(direction),
    ]);
  }

  /** Nothing was answered as an implementation answers (404, 5xx, no answer): the likely cause is where they were sent. */
  #answersNothing(direction: Direction): Judgement[] {
    const watch = this.#watches[direction];
    const { side, what, flag, deadRules } = SIDES[direction];
    const upstream = this.upstreams[direction]
      ? `${this.upstreams[direction]} (${flag})`
      : `the URL observe forwarded them to (${flag})`;
    if (watch.total < MIN_EXCHANGES || watch.dead < watch.total) return [];
    return [
      {
        check: `${side}-answers-nothing`,
        title: `the ${side} answers the ${what} it is sent`,
        labels: deadRules,
        side,
        finding: {
          status: 'warning',
          message: `every one of the ${watch.total} ${what} was answered ${[...watch.deadStatuses].join(' or ')}: likely a misconfigured upstream, check ${upstream}: the path each request was received on is appended to it`,
        },
        evidence: { exchanges: watch.deadEvidence.map((e) => (typeof e === 'function' ? e() : e)) },
      },
    ];
  }

  /**
   * Every valid exchange refused: the rule such a refusal suggests. Not when they were all answered
   * 404 or not at all: that says where they went (the warning above), not how the side reads them.
   */
  #refusesEverything(direction: Direction): Judgement[] {
    const watch = this.#watches[direction];
    const { side, what } = SIDES[direction];
    if (watch.valid < MIN_EXCHANGES || watch.validRefused < watch.valid || watch.notFound === watch.validRefused)
      return [];
    const byKey = watch.keyRefused === watch.validRefused;
    const rule = side === 'merchant' ? (byKey ? 'CB-KEY-SAME' : 'CB-RAW-BODY') : byKey ? 'AUTH-KEY' : 'CRYPTO-SAME';
    const suggests =
      side === 'merchant'
        ? byKey
          ? 'a receiver that compares X-API-KEY with another key refuses so'
          : 'a receiver that cannot read the raw body (a form parser, a JSON body reader) refuses so'
        : byKey
          ? 'a service that does not know this merchant key refuses so'
          : 'a service that cannot open requests sealed under this profile refuses so';
    const carried =
      watch.keyCompared === watch.valid
        ? 'each opens with the keys given and carries the right key'
        : 'each opens with the keys given; the key was not compared: give the API key to the judge';
    return [
      {
        check: `${side}-refuses-everything`,
        title: `the ${side} accepts valid ${what}`,
        labels: [rule],
        side,
        finding: {
          status: 'warning',
          message: `the ${side} refused every one of the ${watch.valid} valid ${what} it was sent (${carried}): ${suggests} (${rule})`,
        },
        evidence: { exchanges: watch.refusedEvidence.map((e) => (typeof e === 'function' ? e() : e)) },
      },
    ];
  }
}
