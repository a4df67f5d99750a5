import { exec } from 'node:child_process';
import { TransportError } from '../core/errors.js';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import type { NetworkConfig } from '../net/network-config.js';
import { currentNetwork } from './http-client.js';
import { transportOf } from './transport.js';
import type { MerchantTarget } from './types.js';

/** The expected shape of a probe's answer, for error messages. */
const PROBE_SHAPE =
  '{"processed": [<decrypted callback payload>, ...]} (one entry per business processing, in order; paged: with "next" and "more", docs/probe.md)';

/** Where the probe is and how to ask it: the probe fields of a merchant target (`load merchant` builds one). */
export type ProbeSource = Pick<MerchantTarget, 'probeUrl' | 'probeCmd' | 'probeToken' | 'transport'>;

/** Entries asked for per page. */
const PROBE_PAGE_ENTRIES = 500;

/**
 * The largest single probe answer read (a probe that does not page answers its whole history at
 * once): beyond it the read fails with a line saying to page the probe.
 */
const UNPAGED_PROBE_CAP_BYTES = 64 * 1024 * 1024;

/** At most this many pages in one read (a probe whose cursor never ends is refused, not followed forever). */
const MAX_PAGES = 100_000;

/**
 * Where a read of the probe stopped: a paged probe's cursor (its `next`), or for a probe that
 * answers its whole history each time, the number of entries seen. The next read starts there.
 */
export interface ProbeMark {
  cursor?: string;
  index: number;
}

/** What one read of the probe found after a mark. */
interface ProbeRead {
  /** The entries after the mark (exact JSON texts), in processing order; empty when not kept. */
  entries: string[];
  /** Where the read stopped: the next read's start. */
  mark: ProbeMark;
  /** Did the probe page (answer `next`)? */
  paged: boolean;
}

/** How a read goes: whether entries are kept (a baseline needs only the end), at most how many pages, over which network. */
interface ProbeReadOptions {
  keep?: boolean;
  maxPages?: number;
  /** The run's network (run-context.ts); default: the process's, `currentNetwork()`. */
  network?: NetworkConfig;
}

/** The parsed body of one probe answer. */
interface ProbeAnswer {
  /** The entries from the asked index on, as exact JSON texts. */
  entries: string[];
  /** How many entries the answer held in all. */
  count: number;
  next?: string;
  more: boolean;
}

/** Bytes the scan tells apart: JSON's structure is ASCII, and no byte of a UTF-8 multi-byte character is. */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** A probe answer's shape as the scan finds it. */
interface ScannedProbe {
  entries: string[];
  count: number;
  fields: Record<string, string>;
}

/**
 * Scans a probe answer without parsing it (strings and brackets tracked): the raw texts of the
 * processed list's entries from `skip` on, how many entries it holds in all, and the raw texts of
 * the top-level fields beside it. `{"processed": [...], ...}` or a bare array; undefined when the
 * text is not that shape. It scans the UTF-8 bytes and decodes only the entries it keeps: a probe
 * that answers its whole history every time costs one pass over the bytes of what was seen, with
 * no text made of it (a long run reads such a probe once per generated case).
 */
function scanProbe(bytes: Uint8Array, skip = 0): ScannedProbe | undefined {
  return new ProbeScanner(bytes, skip).scan();
}

/** One scan of a probe answer: a cursor over its bytes and the count of list entries passed. */
class ProbeScanner {
  private readonly buffer: Buffer;
  private readonly length: number;
  /** The cursor: the index of the next byte to read. */
  private at = 0;
  /** The entries of the processed list seen so far, kept or not. */
  private count = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly skip: number,
  ) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.length = bytes.length;
  }

  scan(): ScannedProbe | undefined {
    const { bytes } = this;
    this.skipSpace();
    if (bytes[this.at] === OPEN_LIST) {
      const entries = this.list();
      this.skipSpace();
      return entries && this.at === this.length ? { entries, count: this.count, fields: {} } : undefined;
    }
    if (bytes[this.at] !== OPEN_OBJECT) return undefined;
    this.at++;
    return this.object();
  }

  private text(from: number, to: number): string {
    return this.buffer.toString('utf8', from, to);
  }

  private skipSpace(): void {
    while (this.at < this.length && isSpace(this.bytes[this.at])) this.at++;
  }

  /** Index just past the string whose opening quote is at `start`, or -1. */
  private stringEnd(start: number): number {
    let from = start + 1;
    for (;;) {
      const quote = this.buffer.indexOf(QUOTE, from);
      if (quote < 0) return -1;
      let slashes = 0;
      while (this.bytes[quote - 1 - slashes] === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return quote + 1;
      from = quote + 1;
    }
  }

  /** Index just past the JSON value starting at `start` (strings and brackets tracked), or -1. */
  private valueEnd(start: number): number {
    const { bytes, length } = this;
    let depth = 0;
    for (let j = start; j < length; j++) {
      const byte = bytes[j]!;
      if (byte === QUOTE) {
        const end = this.stringEnd(j);
        if (end < 0) return -1;
        if (depth === 0) return end;
        j = end - 1;
      } else if (byte === OPEN_LIST || byte === OPEN_OBJECT) depth++;
      else if (byte === CLOSE_LIST || byte === CLOSE_OBJECT) {
        depth--;
        if (depth === 0) return j + 1;
        if (depth < 0) return j;
      } else if (depth === 0 && (byte === COMMA || isSpace(byte))) return j;
    }
    return depth === 0 ? length : -1;
  }

  /** The list at the cursor: the texts of its entries from `skip` on, or undefined when it is not a list. */
  private list(): string[] | undefined {
    const { bytes } = this;
    if (bytes[this.at] !== OPEN_LIST) return undefined;
    this.at++;
    const entries: string[] = [];
    for (;;) {
      this.skipSpace();
      if (bytes[this.at] === CLOSE_LIST) {
        this.at++;
        return entries;
      }
      const end = this.valueEnd(this.at);
      if (end < 0 || end === this.at) return undefined;
      if (this.count >= this.skip) entries.push(this.text(this.at, end));
      this.count++;
      this.at = end;
      this.skipSpace();
      if (bytes[this.at] === COMMA) this.at++;
      else if (bytes[this.at] !== CLOSE_LIST) return undefined;
    }
  }

  /** The object after its opening brace: its processed list and its other fields' texts. */
  private object(): ScannedProbe | undefined {
    const { bytes } = this;
    const fields: Record<string, string> = {};
    let entries: string[] | undefined;
    for (;;) {
      this.skipSpace();
      if (bytes[this.at] === CLOSE_OBJECT && Object.keys(fields).length === 0 && !entries) break;
      const key = this.key();
      if (key === undefined) return undefined;
      if (key === 'processed' && bytes[this.at] === OPEN_LIST) {
        entries = this.list();
        if (!entries) return undefined;
      } else {
        const end = this.valueEnd(this.at);
        if (end < 0 || end === this.at) return undefined;
        fields[key] = this.text(this.at, end);
        this.at = end;
      }
      this.skipSpace();
      if (bytes[this.at] === COMMA) this.at++;
      else if (bytes[this.at] === CLOSE_OBJECT) break;
      else return undefined;
    }
    return entries ? { entries, count: this.count, fields } : undefined;
  }

  /** A field's key and its colon; the cursor is left on the value. Undefined when there is none. */
  private key(): string | undefined {
    const { bytes } = this;
    if (bytes[this.at] !== QUOTE) return undefined;
    const keyEnd = this.valueEnd(this.at);
    if (keyEnd < 0) return undefined;
    let key: string;
    try {
      key = JSON.parse(this.text(this.at, keyEnd)) as string;
    } catch {
      return undefined;
    }
    this.at = keyEnd;
    this.skipSpace();
    if (bytes[this.at] !== COLON) return undefined;
    this.at++;
    this.skipSpace();
    return key;
  }
}

/**
 * The texts of the processed list's entries, found by one scan that tracks strings and brackets
 * (no parse): `{"processed": [...]}` or a bare array. Undefined when the text is not that shape.
 */
export function probeEntryTexts(text: string): string[] | undefined {
  return scanProbe(Buffer.from(text, 'utf8'))?.entries;
}

/**
 * Parses a probe's answer (`{"processed": [...]}` with optional `next`/`more`, or a bare array from
 * a probe command), as text or as the bytes received. Only the entries from `skip` on are decoded
 * and parsed (exactly, as exact JSON texts): a probe that answers its whole history each time costs
 * a scan of its bytes, not a parse, of what was seen.
 */
export function parseProbeAnswer(answer: string | Uint8Array, source: string, skip = 0): ProbeAnswer {
  const scanned = scanProbe(typeof answer === 'string' ? Buffer.from(answer, 'utf8') : answer, skip);
  if (!scanned) {
    // Not the shape: parse it to say what is wrong.
    try {
      parseExactJson(
        (typeof answer === 'string'
          ? answer
          : Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength).toString('utf8')
        ).trim(),
      );
    } catch {
      throw new Error(`${source} gave no JSON: expected ${PROBE_SHAPE}`);
    }
    throw new Error(`${source} gave JSON without a processed list: expected ${PROBE_SHAPE}`);
  }
  const field = (name: string): ExactJson | undefined => {
    const raw = scanned.fields[name];
    if (raw === undefined) return undefined;
    try {
      return parseExactJson(raw);
    } catch {
      throw new Error(`${source} gave no JSON (its "${name}"): expected ${PROBE_SHAPE}`);
    }
  };
  const next = field('next');
  const cursor = typeof next === 'string' ? next : next instanceof LosslessNumber ? next.value : undefined;
  if (next !== undefined && next !== null && cursor === undefined)
    throw new Error(`${source} gave a "next" that is not a string: expected ${PROBE_SHAPE}`);
  let entries: string[];
  try {
    entries = scanned.entries.map((entry) => stringifyExact(parseExactJson(entry)));
  } catch {
    throw new Error(`${source} gave no JSON (an entry of its processed list): expected ${PROBE_SHAPE}`);
  }
  return {
    entries,
    count: scanned.count,
    ...(cursor === undefined ? {} : { next: cursor }),
    more: field('more') === true,
  };
}

/** Runs a shell command (bounded in time) and resolves with its stdout; a failure names the command's exit. */
export function runShellCommand(command: string, what: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    exec(
      command,
      { timeout: timeoutMs, maxBuffer: UNPAGED_PROBE_CAP_BYTES, windowsHide: true },
      (error, stdout, stderr) => {
        if (error) {
          const why = error.killed
            ? `did not finish within ${timeoutMs / 1000} s`
            : `exited with status ${error.code ?? '?'}`;
          reject(new Error(`${what} ${why}${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`));
        } else resolve(stdout);
      },
    );
  });
}

/** The probe URL with this page's query (a query the user's URL already holds is kept). */
function pageUrl(probeUrl: string, cursor: string | undefined): string {
  const url = new URL(probeUrl);
  url.searchParams.set('limit', String(PROBE_PAGE_ENTRIES));
  if (cursor !== undefined) url.searchParams.set('since', cursor);
  return url.toString();
}

/** One GET of the probe; the answer's bytes (decoded only where an entry is kept), or a one-line error naming what to do. */
async function getProbe(
  target: ProbeSource,
  url: string,
  network: NetworkConfig,
): Promise<{ status: number; body: Buffer }> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(target.probeToken ? { authorization: `Bearer ${target.probeToken}` } : {}),
  };
  try {
    // The run's network and its connections; only this answer's cap is raised (a probe that does not page answers its whole history).
    const answer = await transportOf(target).send({
      method: 'GET',
      url,
      headers,
      network,
      maxBodyBytes: Math.max(network.maxBodyBytes, UNPAGED_PROBE_CAP_BYTES),
    });
    return { status: answer.status, body: answer.body };
  } catch (error) {
    if (error instanceof TransportError && error.reason === 'too-large') {
      throw new Error(
        `the probe ${target.probeUrl} answered more than ${UNPAGED_PROBE_CAP_BYTES} bytes at once: page it (?since=<cursor>&limit=<n>, answering "next" and "more"; docs/probe.md)`,
        { cause: error },
      );
    }
    throw error;
  }
}

function refusal(target: ProbeSource, status: number): Error {
  if (status === 401 || status === 403) {
    return new Error(
      target.probeToken
        ? `the probe ${target.probeUrl} answered ${status} to the probe token (--probe-token or WALLET_PROBE_TOKEN): is it the one in the merchant's probe.token?`
        : `the probe ${target.probeUrl} answered ${status}: it may need a token; give it with --probe-token or WALLET_PROBE_TOKEN`,
    );
  }
  return new Error(`the probe ${target.probeUrl} answered ${status}: expected 200 with ${PROBE_SHAPE}`);
}

/** Probes that answered the paged request with an error but the plain one with 200: asked without a query. */
const UNPAGED = new WeakMap<ProbeSource, true>();

/**
 * Reads the probe after `from` (undefined: from the start): page by page when the probe pages
 * (`?since=<cursor>&limit=<n>`, answers `next` and `more`), else its whole answer once, of which the
 * entries past `from.index` are new. A history of any length is read in bounded pieces; with
 * `keep: false` nothing but the end is remembered (a baseline). A probe command is run once.
 */
export async function readProbeAfter(
  target: ProbeSource,
  from: ProbeMark | undefined,
  options: ProbeReadOptions = {},
): Promise<ProbeRead | undefined> {
  const read = await readProbeOnce(target, from, options);
  if (read) {
    const session = (options.network ?? currentNetwork()).session;
    const answered = ANSWERED.get(session) ?? new Set<string>();
    ANSWERED.set(session, answered.add(probeKey(target)));
  }
  return read;
}

/**
 * The probes that gave a readable answer in a run, by the run's session (pre-flight and the suites
 * share it; a run's copy of the target does not): a failure of theirs afterwards is the merchant's.
 */
const ANSWERED = new WeakMap<object, Set<string>>();
const probeKey = (target: ProbeSource) => (target.probeCmd ? `cmd ${target.probeCmd}` : `url ${target.probeUrl ?? ''}`);

/** Did this probe give a readable answer earlier in the run of `network` (pre-flight, a baseline, a step's read)? */
export function probeAnswered(target: ProbeSource, network: NetworkConfig): boolean {
  return ANSWERED.get(network.session)?.has(probeKey(target)) ?? false;
}

async function readProbeOnce(
  target: ProbeSource,
  from: ProbeMark | undefined,
  options: ProbeReadOptions,
): Promise<ProbeRead | undefined> {
  const keep = options.keep ?? true;
  const network = options.network ?? currentNetwork();
  if (target.probeCmd) {
    const answer = parseProbeAnswer(
      await runShellCommand(target.probeCmd, '--probe-cmd', 30_000),
      '--probe-cmd',
      keep ? (from?.index ?? 0) : Infinity,
    );
    return { entries: answer.entries, mark: { index: answer.count }, paged: false };
  }
  if (!target.probeUrl) return undefined;
  const source = `the probe ${target.probeUrl}`;
  const entries: string[] = [];
  let cursor = from?.cursor;
  const maxPages = Math.min(options.maxPages ?? MAX_PAGES, MAX_PAGES);
  for (let page = 0; page < maxPages; page++) {
    let answer = await getProbe(
      target,
      UNPAGED.has(target) ? target.probeUrl : pageUrl(target.probeUrl, cursor),
      network,
    );
    if (answer.status !== 200 && page === 0 && !UNPAGED.has(target)) {
      // A probe that refuses a query it does not know (a strict router may even answer 401 to a
      // path it does not serve): ask for the plain URL, without the page query.
      const plain = await getProbe(target, target.probeUrl, network);
      if (plain.status === 200) UNPAGED.set(target, true);
      answer = plain;
    }
    if (answer.status !== 200) throw refusal(target, answer.status);
    // Until it shows it pages, an answer may be the whole history: only what follows the mark is parsed.
    const parsed = parseProbeAnswer(
      answer.body,
      source,
      page === 0 && from?.cursor === undefined ? (keep ? (from?.index ?? 0) : Infinity) : 0,
    );
    if (parsed.next === undefined) {
      // It does not page: the answer is the whole history.
      if (page > 0 || from?.cursor !== undefined)
        throw new Error(
          `${source} stopped paging (an answer without "next" after one with it): expected ${PROBE_SHAPE}`,
        );
      return { entries: parsed.entries, mark: { index: parsed.count }, paged: false };
    }
    if (page === 0 && from?.cursor === undefined && parsed.entries.length < parsed.count) {
      // It pages after all: its first page is read whole.
      parsed.entries = parseProbeAnswer(answer.body, source).entries;
    }
    if (keep) for (const entry of parsed.entries) entries.push(entry);
    const advanced = parsed.next !== cursor;
    cursor = parsed.next;
    if (!parsed.more || parsed.entries.length === 0) return { entries, mark: { cursor, index: 0 }, paged: true };
    if (!advanced)
      throw new Error(
        `${source} answered "more" with the same "next" cursor it was asked for: it would be read forever`,
      );
  }
  if (options.maxPages !== undefined)
    return { entries, mark: { ...(cursor === undefined ? {} : { cursor }), index: 0 }, paged: true };
  throw new Error(`${source} still had more after ${MAX_PAGES} pages of ${PROBE_PAGE_ENTRIES}: stopped`);
}

/**
 * The entries the probe shows after `from` (undefined: from the start), or none without a probe:
 * for callers that only count or compare what was processed (`load merchant`, the storm).
 *
 * @example const processed = await probeEntriesAfter({ probeUrl: 'http://127.0.0.1:9400/probe' }, mark)
 */
export async function probeEntriesAfter(
  target: ProbeSource,
  from: ProbeMark | undefined,
  options: ProbeReadOptions = {},
): Promise<string[]> {
  return (await readProbeAfter(target, from, options))?.entries ?? [];
}

/** Where the last read of each target's probe stopped, so a new baseline reads only what came since. */
const LAST_MARK = new WeakMap<ProbeSource, ProbeMark>();

/**
 * The end of the probe's history now (undefined without a probe): a deliver step's baseline. The
 * first call of a run pages through the history once, keeping nothing; later calls start where the
 * last read of this target stopped.
 */
export async function probeBaseline(target: ProbeSource, network?: NetworkConfig): Promise<ProbeMark | undefined> {
  const read = await readProbeAfter(target, LAST_MARK.get(target), { keep: false, ...(network ? { network } : {}) });
  if (read) LAST_MARK.set(target, read.mark);
  return read?.mark;
}

/** Records where a read of the target's probe stopped (undefined: forget it, e.g. after a restart). */
export function rememberProbeMark(target: ProbeSource, mark: ProbeMark | undefined): void {
  if (mark) LAST_MARK.set(target, mark);
  else LAST_MARK.delete(target);
}
