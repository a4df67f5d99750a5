import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { LosslessNumber, parseExactJson, type ExactJson } from '../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile } from '../core/profile.js';
import type { RsaKey } from '../crypto/keys.js';
import { idempotencyKey } from '../merchant/idempotency.js';
import { readAcknowledgement, type CallbackAnswer } from '../wire/acknowledgement.js';
import { callbackHeaders, sealCallback, spelledHeaders, withRequestUUID } from '../wire/callback-delivery.js';
import { generateEvents, type StormEvent } from './events.js';
import { STORM_LIMITS } from './limits.js';

/** Everything a storm needs; every count and time is bounded. */
interface StormOptions {
  /** Callback URLs, deliveries spread over them (several instances behind no balancer). */
  callbackUrls: readonly string[];
  apiKey: string;
  /** The key callbacks are encrypted with (the service's half: private under the default profile). */
  key: RsaKey;
  profile?: CryptoProfile;
  /** Distinct events (default 1,000; at most 100,000). */
  events?: number;
  /** Share of events delivered again with a fresh requestUUID (default 0.3; 0 to 5). */
  duplicates?: number;
  /** Deliveries in flight at once (default 32; at most 1,000). */
  concurrency?: number;
  /** Delivery starts per second, unbounded when absent. */
  rate?: number;
  /** Callback types to generate (default 1 and 3). */
  types?: readonly number[];
  /** The storm stops starting deliveries after this many seconds (default 120; at most 3,600). */
  durationS?: number;
  /** TLS of https callback URLs: trusted CAs (all of them: system roots included when wanted), client certificate, no verification. */
  tls?: StormTls;
  /** Reads the merchant's processed payload texts (the probe); without it exactly-once is not judged. */
  probe?: () => Promise<string[]>;
  /** Attempts of one delivery until acknowledged, as the service retries (default 8). */
  maxAttempts?: number;
  /** Whole-attempt timeout, ms (default 10 s). */
  timeoutMs?: number;
  /** Called about once a second, and once at the end, with the counters so far. */
  onProgress?: (progress: StormProgress) => void;
  /** Called after each delivery finishes (acknowledged or given up); tests use it to inject faults mid-storm. */
  onDelivery?: (done: number, planned: number) => void | Promise<void>;
}

/** How a storm speaks TLS (the CLI builds it from --ca, --cert, --key, --insecure). */
interface StormTls {
  /** The CAs trusted (replacing the defaults); undefined: Node's defaults. */
  ca?: string[];
  cert?: string;
  key?: string;
  /** Do not verify the receiver's certificate. */
  insecure?: boolean;
}

/** Counters of a running storm. */
export interface StormProgress {
  elapsedMs: number;
  planned: number;
  done: number;
  acknowledged: number;
  attempts: number;
  retries: number;
}

/** An event processed other than once, or acknowledged but not processed. */
interface StormOffender {
  key: string;
  trackingId: string;
  type: number;
  /** How many times the probe shows it processed. */
  processed: number;
  /** Whether some delivery of it was acknowledged with errCode 0. */
  acknowledged: boolean;
}

/** What a storm found. */
export interface StormResult {
  events: number;
  /** Deliveries beyond the first of each event (redeliveries; retries not counted). */
  duplicateDeliveries: number;
  deliveries: number;
  attempts: number;
  retries: number;
  /** Events with at least one acknowledged delivery. */
  acknowledged: number;
  /**
   * Attempts counted as acknowledged though their answer is not the plain HTTP 200 `{"errCode":0}`
   * (errCode the number 0 with another status, or 0 written `0.0`): U-CB-RESPONSE leaves them open;
   * the storm, like the emulator, counts them.
   */
  ambiguousAcknowledgements: number;
  /** Deliveries given up after every attempt failed (or the time ran out). */
  unacknowledgedDeliveries: number;
  /** undefined without a probe: not judged. */
  exactlyOnce: boolean | undefined;
  offenders: StormOffender[];
  /** Probe entries matching no event of this storm (other traffic; the CLI reads only what was processed after the storm began). */
  foreignProbeEntries: number;
  durationMs: number;
  /** Acknowledged events per second of the delivery phase. */
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Attempt latencies: upper bound in ms (Infinity for the last) and count. */
  histogram: Array<{ upToMs: number; count: number }>;
  /** A few failure reasons with counts (connection refused, HTTP 500, errCode 409, ...). */
  failures: Record<string, number>;
}

const BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, Infinity];
const RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1_600, 3_200];

interface Planned {
  event: StormEvent;
  /** A redelivery, not the event's first delivery. */
  duplicate: boolean;
  /** Pre-sealed first attempt (keeps RSA work out of the timed phase). */
  body: string;
}

/**
 * A callback storm: N distinct events, a share delivered again (fresh requestUUID; half right after
 * the first delivery so they race it, half at the end), spread over the URLs, each delivery
 * retried until acknowledged (errCode the number 0, src/wire/acknowledgement.ts) as the service does, then the
 * probe is read and every event must show exactly once.
 *
 * @example const result = await runStorm({ callbackUrls: [url], apiKey, key, probe: () => readProbe(probeUrl) })
 */
export async function runStorm(options: StormOptions): Promise<StormResult> {
  const settings = stormSettings(options);
  const events = generateEvents(settings.events, options.types ?? [1, 3]);
  const storm = new Storm(options, settings, events);
  await storm.deliver();
  const judged = options.probe ? judge(events, storm.acked, await options.probe()) : undefined;
  return storm.result(judged);
}

/** The storm's bounds, checked (a RangeError names the one out of range) and with their defaults. */
interface StormSettings {
  events: number;
  share: number;
  concurrency: number;
  durationMs: number;
  maxAttempts: number;
  timeoutMs: number;
  profile: CryptoProfile;
  urls: URL[];
}

function stormSettings(options: StormOptions): StormSettings {
  const events = bounded(options.events ?? 1_000, 1, STORM_LIMITS.events, 'events');
  const share = bounded(options.duplicates ?? 0.3, 0, STORM_LIMITS.duplicates, 'duplicates');
  const concurrency = bounded(options.concurrency ?? 32, 1, STORM_LIMITS.concurrency, 'concurrency');
  const durationMs = bounded(options.durationS ?? 120, 0.1, STORM_LIMITS.durationS, 'duration') * 1_000;
  const maxAttempts = bounded(options.maxAttempts ?? 8, 1, STORM_LIMITS.maxAttempts, 'maxAttempts');
  if (options.callbackUrls.length === 0) throw new RangeError('a storm needs at least one callback URL');
  const urls = options.callbackUrls.map((url) => new URL(url));
  return {
    events,
    share,
    concurrency,
    durationMs,
    maxAttempts,
    timeoutMs: options.timeoutMs ?? 10_000,
    profile: options.profile ?? DEFAULT_PROFILE,
    urls,
  };
}

/** One storm under way: the planned deliveries, the workers that send them, and what they saw. */
class Storm {
  readonly acked = new Set<number>();
  readonly #options: StormOptions;
  readonly #settings: StormSettings;
  readonly #plan: Planned[];
  readonly #agents: Array<HttpAgent | HttpsAgent>;
  readonly #latencies: number[] = [];
  readonly #failures: Record<string, number> = {};
  readonly #counters = { done: 0, attempts: 0, retries: 0, unacknowledged: 0, ambiguous: 0 };
  #started = 0;
  #elapsed = 0;
  /** The next planned delivery a free worker takes. */
  #next = 0;

  constructor(options: StormOptions, settings: StormSettings, events: StormEvent[]) {
    this.#options = options;
    this.#settings = settings;
    this.#plan = planDeliveries(events, settings.share).map(
      ({ event, duplicate }) => ({ event, duplicate, body: this.#seal(event) }) satisfies Planned,
    );
    const tls = options.tls ?? {};
    const httpsOptions = {
      rejectUnauthorized: !tls.insecure,
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert ? { cert: tls.cert } : {}),
      ...(tls.key ? { key: tls.key } : {}),
    };
    this.#agents = settings.urls.map((url) =>
      url.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: settings.concurrency, ...httpsOptions })
        : new HttpAgent({ keepAlive: true, maxSockets: settings.concurrency }),
    );
  }

  /** CB-UUID: every delivery and every retry is sealed afresh with its own requestUUID. */
  #seal(event: StormEvent): string {
    return sealCallback(withRequestUUID(event.payload), this.#options.key, this.#settings.profile);
  }

  #progress(): StormProgress {
    return {
      elapsedMs: performance.now() - this.#started,
      planned: this.#plan.length,
      done: this.#counters.done,
      acknowledged: this.acked.size,
      attempts: this.#counters.attempts,
      retries: this.#counters.retries,
    };
  }

  /** Sends every planned delivery with `concurrency` workers, until done or the duration is over. */
  async deliver(): Promise<void> {
    const { onProgress } = this.#options;
    this.#started = performance.now();
    const ticker = onProgress ? setInterval(() => onProgress(this.#progress()), 1_000) : undefined;
    try {
      await Promise.all(
        Array.from({ length: Math.min(this.#settings.concurrency, this.#plan.length) }, () => this.#worker()),
      );
    } finally {
      if (ticker) clearInterval(ticker);
      for (const agent of this.#agents) agent.destroy();
    }
    this.#elapsed = performance.now() - this.#started;
    this.#counters.unacknowledged += this.#plan.length - this.#counters.done;
    onProgress?.(this.#progress());
  }

  async #worker(): Promise<void> {
    const deadline = this.#started + this.#settings.durationMs;
    for (;;) {
      const index = this.#next++;
      if (index >= this.#plan.length || performance.now() > deadline) return;
      if (this.#options.rate) {
        const due = this.#started + (index / this.#options.rate) * 1_000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const item = this.#plan[index]!;
      if (await this.#deliverOne(index, item, deadline)) this.acked.add(item.event.index);
      else this.#counters.unacknowledged++;
      this.#counters.done++;
      await this.#options.onDelivery?.(this.#counters.done, this.#plan.length);
    }
  }

  /** One delivery, retried until acknowledged, out of attempts or past the deadline. */
  async #deliverOne(index: number, item: Planned, deadline: number): Promise<boolean> {
    const { urls, maxAttempts, timeoutMs } = this.#settings;
    for (let attempt = 0; attempt < maxAttempts && performance.now() <= deadline; attempt++) {
      if (attempt > 0) {
        this.#counters.retries++;
        await new Promise((resolve) =>
          setTimeout(resolve, RETRY_DELAYS_MS[Math.min(attempt - 1, RETRY_DELAYS_MS.length - 1)]),
        );
      }
      // The retry goes to the next URL, as a balancer would send it to another instance.
      const which = (index + attempt) % urls.length;
      const body = attempt === 0 ? item.body : this.#seal(item.event);
      this.#counters.attempts++;
      const sentAt = performance.now();
      const answer = await post(urls[which]!, this.#agents[which]!, body, this.#options.apiKey, timeoutMs);
      this.#latencies.push(performance.now() - sentAt);
      const verdict = typeof answer === 'string' ? undefined : readAcknowledgement(answer).verdict;
      // CB-ERRCODE as the service reads it (the emulator's reading of U-CB-RESPONSE): an ambiguous answer counts.
      if (verdict === 'acknowledged' || verdict === 'ambiguous') {
        if (verdict === 'ambiguous') this.#counters.ambiguous++;
        return true;
      }
      const why = typeof answer === 'string' ? answer : failureOf(answer);
      this.#failures[why] = (this.#failures[why] ?? 0) + 1;
    }
    return false;
  }

  result(judged: { offenders: StormOffender[]; foreign: number } | undefined): StormResult {
    const counters = this.#counters;
    const sorted = this.#latencies.sort((a, b) => a - b);
    const quantile = (q: number) =>
      sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
    return {
      events: this.#settings.events,
      duplicateDeliveries: this.#plan.filter((item) => item.duplicate).length,
      deliveries: this.#plan.length,
      attempts: counters.attempts,
      retries: counters.retries,
      acknowledged: this.acked.size,
      ambiguousAcknowledgements: counters.ambiguous,
      unacknowledgedDeliveries: counters.unacknowledged,
      exactlyOnce: judged ? judged.offenders.length === 0 : undefined,
      offenders: judged?.offenders ?? [],
      foreignProbeEntries: judged?.foreign ?? 0,
      durationMs: this.#elapsed,
      eventsPerSecond: this.acked.size / (this.#elapsed / 1_000),
      p50Ms: quantile(0.5),
      p99Ms: quantile(0.99),
      maxMs: sorted.at(-1) ?? 0,
      histogram: BUCKETS.map((upToMs, bucket) => ({
        upToMs,
        count: sorted.filter((ms) => ms <= upToMs && (bucket === 0 || ms > BUCKETS[bucket - 1]!)).length,
      })),
      failures: this.#failures,
    };
  }
}

/**
 * The delivery order: each event once; `share` × N redeliveries of events chosen evenly, half
 * placed right after the event's first delivery (they race it), half at the end (late redelivery).
 */
export function planDeliveries(
  events: readonly StormEvent[],
  share: number,
): Array<{ event: StormEvent; duplicate: boolean }> {
  const extra = Math.round(share * events.length);
  const soon = new Map<number, number>();
  const late: StormEvent[] = [];
  for (let d = 0; d < extra; d++) {
    // Spread redeliveries over the events (a prime stride), so most duplicated events get one.
    const event = events[(d * 7_919) % events.length]!;
    if (d % 2 === 0) soon.set(event.index, (soon.get(event.index) ?? 0) + 1);
    else late.push(event);
  }
  const plan: Array<{ event: StormEvent; duplicate: boolean }> = [];
  for (const event of events) {
    plan.push({ event, duplicate: false });
    for (let k = 0; k < (soon.get(event.index) ?? 0); k++) plan.push({ event, duplicate: true });
  }
  for (const event of late) plan.push({ event, duplicate: true });
  return plan;
}

/** Matches probe entries to events by idempotency key: every event must show once. */
function judge(
  events: readonly StormEvent[],
  acked: ReadonlySet<number>,
  probe: readonly string[],
): { offenders: StormOffender[]; foreign: number } {
  const counts = new Map<string, number>();
  const byKey = new Map(events.map((event) => [event.key, event]));
  let foreign = 0;
  for (const text of probe) {
    let key: string | undefined;
    try {
      key = idempotencyKey(parseExactJson(text) as Record<string, ExactJson>);
    } catch {
      key = undefined;
    }
    if (key === undefined || !byKey.has(key)) foreign++;
    else counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const offenders = events
    .filter((event) => (counts.get(event.key) ?? 0) !== 1)
    .map((event) => ({
      key: event.key,
      trackingId: event.trackingId,
      type: event.type,
      processed: counts.get(event.key) ?? 0,
      acknowledged: acked.has(event.index),
    }));
  return { offenders, foreign };
}

/** Why an answer did not acknowledge, in the storm's short words (its failure counts). */
function failureOf(answer: CallbackAnswer): string {
  if (answer.status !== 200) return `HTTP ${answer.status}`;
  let json: ExactJson;
  try {
    json = parseExactJson(answer.body);
  } catch {
    return 'answer not JSON';
  }
  const code =
    json !== null && typeof json === 'object' && !Array.isArray(json) && !(json instanceof LosslessNumber)
      ? (json as Record<string, ExactJson>).errCode
      : undefined;
  return `errCode ${code instanceof LosslessNumber ? code.value : JSON.stringify(code ?? null)}`;
}

/** One attempt: the answer (status and body), or a short reason when none came. */
function post(
  url: URL,
  agent: HttpAgent | HttpsAgent,
  body: string,
  apiKey: string,
  timeoutMs: number,
): Promise<CallbackAnswer | string> {
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...spelledHeaders(callbackHeaders(apiKey)), 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= 64 * 1024) chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', () => resolve('answer cut off'));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve(error.message === 'timeout' ? 'timeout' : (error.code ?? 'send failed')),
    );
    request.end(body);
  });
}

function bounded(value: number, min: number, max: number, what: string): number {
  if (!Number.isFinite(value) || value < min || value > max)
    throw new RangeError(`${what} must be from ${min} to ${max}, not ${value}`);
  return value;
}
