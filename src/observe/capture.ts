import { createReadStream } from 'node:fs';
import { ConfigError } from '../core/errors.js';
import { createScrubber, fingerprint, type Scrubber, type SecretKind } from '../secrets/scrub.js';
import type { ExchangeKind, ObservedExchange, ObservedMessage } from './exchange.js';

/**
 * The capture file of `observe --capture FILE`: one `ObservedExchange` per line (JSON lines), in
 * `seq` order, written as exchanges end. Bodies stay as they crossed the wire (Base64 of the raw
 * bytes: ciphertext is kept, so a replay judges the same bytes and `verify merchant --replay` can
 * resend them); secrets in headers do not: the API key, a control token and credentials are stored
 * as their fingerprint (`ak…#3f9c`, see secrets/scrub.ts), never as their value.
 */

/** Headers whose value is a secret whatever it is (a wrong API key may be another merchant's real one). */
export const SECRET_HEADERS: Readonly<Record<string, SecretKind>> = {
  'x-api-key': 'ak',
  'x-control-token': 'ct',
  authorization: 'au',
  'proxy-authorization': 'au',
  cookie: 'au',
  'set-cookie': 'au',
};

/** A value that is already a fingerprint (`ak…#3f9c`): shown as it is, never fingerprinted twice. */
export const FINGERPRINT = /^[a-z]{2}…#[0-9a-f]{4}$/;

function scrubHeaders(headers: Record<string, string>, scrubber: Scrubber | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const kind = SECRET_HEADERS[name];
    // `Bearer abc` keeps its scheme: what kind of credential it was is evidence, the credential is not.
    if (kind === 'au')
      out[name] = value.replace(
        /^(\s*(?:Bearer|Basic)\s+)?(.*)$/is,
        (_m, scheme: string | undefined, credential: string) =>
          `${scheme ?? ''}${FINGERPRINT.test(credential) ? credential : fingerprint(credential, kind)}`,
      );
    else if (kind) out[name] = FINGERPRINT.test(value) ? value : fingerprint(value, kind);
    else out[name] = scrubber ? scrubber.text(value) : value;
  }
  return out;
}

function scrubMessage<T extends ObservedMessage>(message: T, scrubber: Scrubber | undefined): T {
  return { ...message, headers: scrubHeaders(message.headers, scrubber) };
}

/** Scrubs what is a secret by its form (a token-like query parameter, a URL's password) when no scrubber is given. */
let formOnly: Scrubber | undefined;

/**
 * One capture line (with its newline): the exchange with every secret header replaced by its
 * fingerprint, and the request's path and every other header value passed through `scrubber` (the
 * configured secrets in any rendering: raw, percent-encoded, Base64, hex, either letter case; and
 * whatever is a secret by its form, such as `?token=`). Bodies are kept byte for byte.
 */
export function captureLine(exchange: ObservedExchange, scrubber?: Scrubber): string {
  return `${JSON.stringify(scrubExchange(exchange, scrubber))}\n`;
}

/** The exchange as a capture line holds it (and the live page shows it): secrets scrubbed from headers, path and failure, bodies as they crossed. */
export function scrubExchange(exchange: ObservedExchange, scrubber?: Scrubber): ObservedExchange {
  // A key in a query string or a token in a callback URL is as secret as one in a header.
  const path = (scrubber ?? (formOnly ??= createScrubber([]))).text(exchange.request.path);
  return {
    ...exchange,
    request: { ...scrubMessage(exchange.request, scrubber), path },
    ...(exchange.response ? { response: scrubMessage(exchange.response, scrubber) } : {}),
    ...(exchange.upstreamError
      ? {
          upstreamError: {
            ...exchange.upstreamError,
            message: scrubber ? scrubber.text(exchange.upstreamError.message) : exchange.upstreamError.message,
          },
        }
      : {}),
  };
}

/** What a capture writes to: a file stream (node:fs WriteStream) or anything shaped like one. */
export interface CaptureSink {
  write(chunk: string): boolean;
  /** Bytes accepted but not yet written. */
  readonly writableLength: number;
  end(callback: () => void): void;
}

/** Bytes a capture may hold in memory while the disk is behind; past it lines are dropped and counted. */
const DEFAULT_CAPTURE_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * Streams exchanges to a sink, one line each, holding at most `maxBufferedBytes` in memory: a disk
 * that cannot keep up loses lines (counted in `dropped`, which the CLI reports), never the proxy's
 * memory or its latency.
 */
export class CaptureWriter {
  written = 0;
  dropped = 0;
  private readonly maxBufferedBytes: number;

  constructor(
    private readonly sink: CaptureSink,
    private readonly scrubber?: Scrubber,
    options: { maxBufferedBytes?: number } = {},
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_CAPTURE_BUFFER_BYTES;
  }

  write(exchange: ObservedExchange): void {
    if (this.sink.writableLength > this.maxBufferedBytes) {
      this.dropped++;
      return;
    }
    this.sink.write(captureLine(exchange, this.scrubber));
    this.written++;
  }

  /** Flushes what is buffered and closes the sink. */
  close(): Promise<void> {
    return new Promise((resolve) => this.sink.end(resolve));
  }
}

const KINDS: readonly ExchangeKind[] = ['energy', 'withdraw', 'card-close', 'callback', 'other'];
const DIRECTIONS: ReadonlyArray<ObservedExchange['direction']> = ['merchant→service', 'service→merchant'];
// One character class and a length test, no repeated group: a group repeated per 4 characters
// backtracks through the regex engine's stack, which overflowed on a body of about 6 MiB.
const BASE64_ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard, padded Base64 (length a multiple of 4, at most two `=` at the end), checked in linear time. */
function isStandardBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_ALPHABET.test(text);
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkMessage(value: unknown, where: string): void {
  if (!isObject(value)) throw new Error(`${where} must be an object`);
  if (!isObject(value.headers)) throw new Error(`${where}.headers must be an object of header values`);
  for (const [name, header] of Object.entries(value.headers)) {
    if (typeof header !== 'string') throw new Error(`${where}.headers.${name} must be a string`);
    if (name !== name.toLowerCase()) throw new Error(`${where}.headers.${name}: header names are lower-case`);
  }
  if (typeof value.bodyBase64 !== 'string')
    throw new Error(`${where}.bodyBase64 must be a string (standard, padded Base64 of the raw body)`);
  if (!isStandardBase64(value.bodyBase64)) throw new Error(`${where}.bodyBase64 is not standard, padded Base64`);
  if (value.truncated !== undefined && value.truncated !== true)
    throw new Error(`${where}.truncated must be true when present`);
}

function checkInteger(value: unknown, where: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new Error(
      `${where} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}`,
    );
}

/**
 * One capture line as an exchange, or an Error naming the first problem (`seq must be ...`). The
 * whole shape is checked, so a judge never meets a half-formed exchange.
 */
export function parseCaptureLine(text: string): ObservedExchange {
  let value: unknown;
  try {
    // No amount is read here: numbers of a line are seq, status and times; bodies are Base64 text.
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!isObject(value)) throw new Error('a line must be one JSON object (an observed exchange)');
  if (value.v !== 1) throw new Error(`v must be 1 (the capture format version), not ${JSON.stringify(value.v)}`);
  checkInteger(value.seq, 'seq', 1);
  if (!KINDS.includes(value.kind as ExchangeKind))
    throw new Error(`kind must be one of ${KINDS.join(', ')}, not ${JSON.stringify(value.kind)}`);
  if (!DIRECTIONS.includes(value.direction as ObservedExchange['direction']))
    throw new Error(`direction must be one of ${DIRECTIONS.join(', ')}, not ${JSON.stringify(value.direction)}`);
  checkInteger(value.startedAt, 'startedAt', 0);
  checkInteger(value.endedAt, 'endedAt', 0);
  if ((value.endedAt as number) < (value.startedAt as number)) throw new Error('endedAt is before startedAt');
  checkMessage(value.request, 'request');
  const request = value.request as Fields;
  if (typeof request.method !== 'string' || !/^[A-Za-z]+$/.test(request.method))
    throw new Error('request.method must be an HTTP method');
  if (typeof request.path !== 'string' || !request.path.startsWith('/'))
    throw new Error('request.path must be a path starting with /');
  if (value.response !== undefined) {
    checkMessage(value.response, 'response');
    checkInteger((value.response as Fields).status, 'response.status', 100, 599);
  }
  if (value.upstreamError !== undefined) {
    const failure = value.upstreamError;
    if (!isObject(failure) || typeof failure.message !== 'string')
      throw new Error('upstreamError must be {message, gatewayStatus}');
    if (failure.gatewayStatus !== 502 && failure.gatewayStatus !== 504)
      throw new Error('upstreamError.gatewayStatus must be 502 or 504');
  }
  if (value.clientGone !== undefined && value.clientGone !== true)
    throw new Error('clientGone must be true when present');
  if (value.response === undefined && value.upstreamError === undefined)
    throw new Error('an exchange has a response or an upstreamError');
  return value as unknown as ObservedExchange;
}

/** The longest capture line read (a line is one exchange, both bodies as Base64): past it a line is refused, not read. */
const MAX_CAPTURE_LINE_BYTES = 256 * 1024 * 1024;

/** One line of a capture as read: its text and whether a newline ended it, or that it was too long to read. */
type CaptureLineRead = { text: string; terminated: boolean } | { tooLong: number };

/**
 * Splits a byte stream into lines without a line-length limit of its own (node:readline holds any
 * line whole, and a line past the engine's longest string crashed): a line longer than `maxBytes`
 * is given as `{ tooLong }` and reading stops.
 */
export async function* captureLines(
  input: AsyncIterable<Buffer | string>,
  maxBytes = MAX_CAPTURE_LINE_BYTES,
): AsyncGenerator<CaptureLineRead> {
  let parts: Buffer[] = [];
  let size = 0;
  for await (const data of input) {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, from);
      const end = newline < 0 ? chunk.length : newline;
      size += end - from;
      if (size > maxBytes) {
        yield { tooLong: maxBytes };
        return;
      }
      if (end > from) parts.push(chunk.subarray(from, end));
      if (newline < 0) break;
      yield { text: Buffer.concat(parts).toString('utf8'), terminated: true };
      parts = [];
      size = 0;
      from = newline + 1;
    }
  }
  if (size > 0) yield { text: Buffer.concat(parts).toString('utf8'), terminated: false };
}

/** Lines as read, or plain strings (each taken as ended by a newline). */
type LineSource = AsyncIterable<string | CaptureLineRead>;

interface ReadCaptureOptions {
  /** The run's API key: a key header stored as its fingerprint is given back as the key. */
  apiKey?: string;
  /** Told of a line skipped with a reason (a last line cut short by a kill), as `FILE:LINE: ...`. */
  onWarning?: (line: string) => void;
}

/**
 * The exchanges of a capture, line by line (bounded memory: one line at a time), in `seq` order.
 * A line that is not an exchange, or out of order, is a ConfigError `FILE:LINE: problem`, and so is
 * a line past the longest read. Blank lines are skipped, and so is a last line without its newline
 * that is not an exchange: observe killed (SIGKILL) while writing it leaves such a line, and the
 * lines before it are whole (a warning says so). An API key header stored as the fingerprint of
 * `apiKey` is given back as `apiKey` itself, so a judge holding the key judges a replay as it
 * judged the live run (a key that was not the configured one stays a fingerprint: still not the key).
 */
export async function* readCapture(
  lines: LineSource,
  file: string,
  options: ReadCaptureOptions = {},
): AsyncGenerator<ObservedExchange> {
  const keyShownAs = options.apiKey === undefined ? undefined : fingerprint(options.apiKey, 'ak');
  let lineNumber = 0;
  let previous = 0;
  for await (const item of lines) {
    lineNumber++;
    const line = typeof item === 'string' ? { text: item, terminated: true } : item;
    if ('tooLong' in line)
      throw new ConfigError(
        'bad-capture',
        `${file}:${lineNumber}: a line longer than ${line.tooLong % 1_048_576 === 0 ? `${line.tooLong / 1_048_576} MiB` : `${line.tooLong} bytes`} is not a capture line observe writes`,
      );
    if (line.text.trim() === '') continue;
    let exchange: ObservedExchange;
    try {
      exchange = parseCaptureLine(line.text);
      if (exchange.seq <= previous)
        throw new Error(`seq ${exchange.seq} does not follow ${previous} (a capture is in seq order)`);
    } catch (error) {
      if (!line.terminated) {
        options.onWarning?.(
          `${file}:${lineNumber}: the last line is cut short (observe stopped while writing it): skipped, the lines before it are read`,
        );
        return;
      }
      throw new ConfigError('bad-capture', `${file}:${lineNumber}: ${(error as Error).message}`);
    }
    previous = exchange.seq;
    if (keyShownAs !== undefined) {
      for (const message of [exchange.request, exchange.response]) {
        if (message && message.headers['x-api-key'] === keyShownAs) message.headers['x-api-key'] = options.apiKey!;
      }
    }
    yield exchange;
  }
}

/** The exchanges of a capture file, streamed line by line (an unreadable file is a one-line ConfigError). */
export async function* readCaptureFile(
  path: string,
  options: ReadCaptureOptions = {},
): AsyncGenerator<ObservedExchange> {
  const input = createReadStream(path);
  await new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (error) =>
      reject(
        new ConfigError(
          'bad-capture',
          `${path}: cannot read the capture: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
        ),
      ),
    );
  });
  try {
    yield* readCapture(captureLines(input as AsyncIterable<Buffer>), path, options);
  } finally {
    input.destroy();
  }
}
