/**
 * Reads a capture file of `observe --capture` (one ObservedExchange as JSON per line, src/observe/exchange.ts)
 * line by line, so a long capture is never held whole. A line that is not an exchange is a
 * one-line error naming the file and the line; blank lines are skipped.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { ConfigError } from '../core/errors.js';
import type { ExchangeKind, ObservedExchange } from './exchange.js';

const KINDS: ReadonlySet<string> = new Set<ExchangeKind>(['energy', 'withdraw', 'card-close', 'callback', 'other']);
const DIRECTIONS: ReadonlySet<string> = new Set(['merchant→service', 'service→merchant']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isHeaders(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** What is wrong with a parsed line, or undefined when it is an exchange. */
function problemOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const line = value as Record<string, unknown>;
  if (line.v !== 1) return `format version ${JSON.stringify(line.v)} (this reader knows 1)`;
  if (!Number.isSafeInteger(line.seq) || (line.seq as number) < 1) return 'seq is not a positive integer';
  if (typeof line.kind !== 'string' || !KINDS.has(line.kind)) return `kind ${JSON.stringify(line.kind)} is not one of ${[...KINDS].join(', ')}`;
  if (typeof line.direction !== 'string' || !DIRECTIONS.has(line.direction)) return `direction ${JSON.stringify(line.direction)} is not merchant→service or service→merchant`;
  if (typeof line.startedAt !== 'number' || typeof line.endedAt !== 'number') return 'startedAt and endedAt must be numbers (ms since the epoch)';
  const request = line.request as Record<string, unknown> | undefined;
  if (typeof request !== 'object' || request === null) return 'no request';
  if (typeof request.method !== 'string' || typeof request.path !== 'string') return 'request.method and request.path must be strings';
  if (!isHeaders(request.headers)) return 'request.headers must map names to strings';
  if (typeof request.bodyBase64 !== 'string' || !BASE64.test(request.bodyBase64)) return 'request.bodyBase64 must be Base64';
  if (line.response !== undefined) {
    const response = line.response as Record<string, unknown>;
    if (typeof response !== 'object' || response === null || !Number.isInteger(response.status)) return 'response.status must be an integer';
    if (!isHeaders(response.headers)) return 'response.headers must map names to strings';
    if (typeof response.bodyBase64 !== 'string' || !BASE64.test(response.bodyBase64)) return 'response.bodyBase64 must be Base64';
  } else if (typeof line.upstreamError !== 'object' || line.upstreamError === null) {
    return 'neither a response nor an upstreamError';
  }
  return undefined;
}

/** Parses one line of a capture; a malformed line is a ConfigError `<source>:<line>: <problem>`. */
export function parseCaptureLine(text: string, lineNumber: number, source = 'capture'): ObservedExchange {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('bad-capture', `${source}:${lineNumber}: not JSON: ${(error as Error).message}`);
  }
  const problem = problemOf(value);
  if (problem) throw new ConfigError('bad-capture', `${source}:${lineNumber}: not an observed exchange: ${problem}`);
  return value as ObservedExchange;
}

/** The exchanges of a capture's lines, in order, parsed one at a time. */
export async function* readCaptureLines(lines: AsyncIterable<string> | Iterable<string>, source = 'capture'): AsyncGenerator<ObservedExchange> {
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    yield parseCaptureLine(line, n, source);
  }
}

/** The exchanges of a capture file, streamed (a missing file is a one-line ConfigError). */
export async function* readCaptureFile(path: string): AsyncGenerator<ObservedExchange> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (error) => reject(new ConfigError('bad-capture', `${path}: cannot read the capture: ${(error as NodeJS.ErrnoException).code ?? error.message}`)));
  });
  await opened;
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* readCaptureLines(lines, path);
  } finally {
    lines.close();
    input.destroy();
  }
}
