/**
 * The live page's state and its server-sent events: the latest exchanges (a ring, bounded by count
 * and by bytes), the latest findings (a ring), a counter per rule, and the browsers listening.
 *
 * Nothing here runs on the forwarding path: `exchange` and `findings` only queue (bounded), and the
 * queue is turned into rows and events at most ten times a second. A browser that reads
 * slower than events come (its socket's buffer past `clientBufferBytes`) is dropped, never waited
 * for: its EventSource reconnects and starts again from a fresh snapshot.
 */
import type { ServerResponse } from 'node:http';
import type { Scrubber } from '../../secrets/scrub.js';
import type { ObserveFinding, ObservedExchange } from '../exchange.js';
import type { JudgeKeys } from '../observed.js';
import { Ring } from './ring.js';
import {
  exchangeDetail,
  exchangeRow,
  findingRows,
  type ExchangeDetail,
  type ExchangeRow,
  type FindingRow,
} from './view.js';

export interface FeedOptions {
  keys: JudgeKeys;
  scrubber: Scrubber;
  /** Exchanges the page holds (default 500); the browser keeps as many. */
  capacity?: number;
  /** Bytes of recorded bodies the ring holds at most (default 32 MiB), so large bodies cannot grow it past that. */
  maxBytes?: number;
  /** Findings the page holds (default 500). */
  findingCapacity?: number;
  /** A browser whose unsent events pass this many bytes is dropped (default 1 MiB). */
  clientBufferBytes?: number;
  /** Browsers listening at most (default 32); more are refused with 503. */
  maxClients?: number;
  /** When queued events are sent (default: 100 ms after the first of them). */
  schedule?: (run: () => void) => void;
}

const DEFAULT_PAGE_EXCHANGES = 500;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
const DEFAULT_CLIENT_BUFFER_BYTES = 1024 * 1024;
const FLUSH_EVERY_MS = 100;

interface Held {
  exchange: ObservedExchange;
  row?: ExchangeRow;
}

/** What a browser receives first: everything the page holds now. */
interface Snapshot {
  capacity: number;
  exchanges: ExchangeRow[];
  findings: FindingRow[];
  /** Failed and warning findings by rule since observe started (not only those still on the page). */
  rules: Record<string, { failed: number; warning: number }>;
  /** Exchanges seen since observe started. */
  seen: number;
}

/** Distinct paths whose scrubbed text a feed remembers at most (then it forgets them all and starts again). */
const PATHS_REMEMBERED = 256;
/** Longer texts are scrubbed each time, never remembered: what is remembered stays small (256 × 512 characters). */
const LONGEST_REMEMBERED = 512;

/**
 * `scrubber` with its text() remembered for up to `size` inputs: the same text always scrubs the
 * same (the secrets are fixed when the scrubber is made), and a busy page scrubs the same few
 * paths thousands of times a second.
 */
export function rememberingScrubber(scrubber: Scrubber, size: number): Scrubber {
  const known = new Map<string, string>();
  return {
    text(input) {
      if (input.length > LONGEST_REMEMBERED) return scrubber.text(input);
      const seen = known.get(input);
      if (seen !== undefined) return seen;
      if (known.size >= size) known.clear();
      const scrubbed = scrubber.text(input);
      known.set(input, scrubbed);
      return scrubbed;
    },
    value: (input) => scrubber.value(input),
  };
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class LiveFeed {
  readonly #exchanges: Ring<number, Held>;
  readonly #findings: Ring<number, FindingRow>;
  readonly #rules = new Map<string, { failed: number; warning: number }>();
  readonly #clients = new Set<ServerResponse>();
  #queuedExchanges: ObservedExchange[] = [];
  #queuedFindings: ObserveFinding[] = [];
  #scheduled = false;
  #findingCount = 0;
  /** The scrubber of rows: a row shows only its path, and most paths repeat. */
  readonly #paths: Scrubber;
  #seen = 0;
  /** Browsers dropped for reading too slowly. */
  dropped = 0;
  readonly #options: Required<Omit<FeedOptions, 'keys' | 'scrubber'>> & Pick<FeedOptions, 'keys' | 'scrubber'>;

  constructor(options: FeedOptions) {
    this.#options = {
      capacity: DEFAULT_PAGE_EXCHANGES,
      maxBytes: DEFAULT_MAX_BYTES,
      findingCapacity: DEFAULT_PAGE_EXCHANGES,
      clientBufferBytes: DEFAULT_CLIENT_BUFFER_BYTES,
      maxClients: 32,
      // Ten sends a second at most: a person reads no faster, and under a heavy load one write per
      // browser carries many rows instead of one write per exchange on the forwarding thread.
      schedule: (run) => void setTimeout(run, FLUSH_EVERY_MS),
      ...options,
    };
    this.#exchanges = new Ring(this.#options.capacity, this.#options.maxBytes);
    this.#findings = new Ring(this.#options.findingCapacity);
    this.#paths = rememberingScrubber(this.#options.scrubber, PATHS_REMEMBERED);
  }

  /** Browsers listening now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** Exchanges held now (at most the capacity). */
  get held(): number {
    return this.#exchanges.size;
  }

  /** One exchange forwarded: queued for the next turn (at most a ring's worth waits; older ones would be pushed out anyway). */
  exchange(exchange: ObservedExchange): void {
    this.#seen++;
    this.#queuedExchanges.push(exchange);
    if (this.#queuedExchanges.length > this.#options.capacity)
      this.#queuedExchanges.splice(0, this.#queuedExchanges.length - this.#options.capacity);
    this.#wake();
  }

  /** Findings the judge settled: counted by rule at once (every one counts), queued likewise. */
  findings(findings: readonly ObserveFinding[]): void {
    for (const finding of findings) {
      if (finding.status !== 'failed' && finding.status !== 'warning') continue;
      for (const rule of finding.rules.length > 0 ? finding.rules : ['none']) {
        const counter = this.#rules.get(rule) ?? { failed: 0, warning: 0 };
        counter[finding.status]++;
        this.#rules.set(rule, counter);
      }
      this.#queuedFindings.push(finding);
    }
    if (this.#queuedFindings.length > this.#options.findingCapacity)
      this.#queuedFindings.splice(0, this.#queuedFindings.length - this.#options.findingCapacity);
    this.#wake();
  }

  #wake(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#options.schedule(() => {
      this.#scheduled = false;
      this.flush();
    });
  }

  #row(held: Held): ExchangeRow {
    return (held.row ??= exchangeRow(held.exchange, this.#options.keys, this.#paths));
  }

  /** Takes what was queued into the rings and the counters, and sends it to every browser listening. */
  flush(): void {
    const exchanges = this.#queuedExchanges;
    const findings = this.#queuedFindings;
    this.#queuedExchanges = [];
    this.#queuedFindings = [];
    let text = '';
    for (const exchange of exchanges) {
      const held: Held = { exchange };
      this.#exchanges.push(
        exchange.seq,
        held,
        exchange.request.bodyBase64.length + (exchange.response?.bodyBase64.length ?? 0),
      );
      // Rows are made when someone looks: with no browser listening, an exchange costs a ring slot only.
      if (this.#clients.size > 0) text += event('exchange', this.#row(held));
    }
    for (const row of findingRows(findings, this.#options.scrubber)) {
      this.#findings.push(this.#findingCount++, row);
      if (this.#clients.size > 0) text += event('finding', row);
    }
    if (text !== '') for (const client of this.#clients) this.#send(client, text);
  }

  /** Writes to one browser, or drops it when it has not taken what it was sent: never awaited. */
  #send(client: ServerResponse, text: string): void {
    if (client.writableLength > this.#options.clientBufferBytes) {
      this.dropped++;
      this.#clients.delete(client);
      client.destroy();
      return;
    }
    client.write(text);
  }

  snapshot(): Snapshot {
    return {
      capacity: this.#options.capacity,
      exchanges: this.#exchanges.values().map((held) => this.#row(held)),
      findings: this.#findings.values(),
      rules: Object.fromEntries(this.#rules),
      seen: this.#seen,
    };
  }

  /** An exchange still on the page, with its payloads opened (on demand: never for an exchange nobody looks at). */
  detail(seq: number): ExchangeDetail | undefined {
    const held = this.#exchanges.get(seq);
    return held && exchangeDetail(held.exchange, this.#options.keys, this.#options.scrubber);
  }

  /** A browser's event stream: the snapshot first, then each event as it comes. False when too many listen already. */
  attach(res: ServerResponse): boolean {
    if (this.#clients.size >= this.#options.maxClients) return false;
    this.flush();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.write(`retry: 2000\n\n${event('snapshot', this.snapshot())}`);
    this.#clients.add(res);
    res.once('close', () => this.#clients.delete(res));
    return true;
  }

  /** A comment line to every browser, so proxies and the browser keep an idle stream open. */
  ping(): void {
    for (const client of this.#clients) this.#send(client, ': ping\n\n');
  }

  /** Ends every stream (observe stops). */
  close(): void {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }
}
