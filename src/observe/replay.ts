/**
 * `verify merchant --replay FILE`: the captured callback deliveries of an observe capture, resent to
 * a merchant's callback URL byte for byte (body and headers as captured), their new answers judged
 * with the observe judge's checks of the merchant's side: a regression suite made of real traffic.
 *
 * The key header is the one exception: a capture holds the key's fingerprint, never the key, so a
 * delivery that carried the merchant's key (or its fingerprint) is resent with the run's API key; one
 * that carried none is resent without; one that carried another key cannot be reproduced and is
 * counted as not replayed.
 */
import { fingerprint } from '../secrets/scrub.js';
import { transportOf, type Transport } from '../runner/api.js';
import { API_KEY_HEADER } from '../wire/callback-delivery.js';
import type { ObservedExchange } from './exchange.js';
import { HOP_BY_HOP } from './proxy.js';

/** Headers a hop sets for itself (the hop-by-hop ones, Host, Content-Length): never copied from a capture. */
const NOT_REPLAYED = new Set([...HOP_BY_HOP, 'host', 'content-length']);

interface ReplayOptions {
  /** The merchant's callback URL (the captured path is not used: the capture came through observe's listener). */
  callbackUrl: string;
  /** The run's API key: what a captured key fingerprint stands for. */
  apiKey: string;
  /** How to reach the merchant (default: HTTP(S) through src/net). */
  transport?: Transport;
  /** Per-delivery deadline, ms (default 10 s). */
  timeoutMs?: number;
}

/** What a replay did besides the exchanges it yields. */
export interface ReplayCounts {
  /** Captured exchanges read. */
  read: number;
  /** Callback deliveries resent. */
  replayed: number;
  /** Callback deliveries not resent: they carried a key that is not the run's (a capture holds only its fingerprint). */
  otherKey: number;
  /**
   * Callback deliveries not resent: another header held a secret (Authorization, Cookie, a secret
   * inside another value) that the capture keeps only as its fingerprint. Resending the fingerprint
   * would make the merchant refuse what it never saw: the capture's limitation, not the merchant's.
   */
  secretHeader?: number;
}

/** A fingerprint inside a header value (`au…#3f9c`, `Bearer au…#3f9c`): the capture scrubbed a secret there. */
const SCRUBBED = /[a-z]{2}…#[0-9a-f]{4}/;

/** The first header (other than the key header, which the run's key stands for) whose value a capture scrubbed, if any. */
export function scrubbedHeader(captured: Record<string, string>): string | undefined {
  return Object.entries(captured).find(
    ([name, value]) =>
      !NOT_REPLAYED.has(name.toLowerCase()) && name.toLowerCase() !== 'x-api-key' && SCRUBBED.test(value),
  )?.[0];
}

/** The headers to resend: as captured, without hop-by-hop ones, the key header set from the run's key. */
export function replayHeaders(captured: Record<string, string>, apiKey: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let key: string | undefined;
  for (const [name, value] of Object.entries(captured)) {
    const lower = name.toLowerCase();
    if (NOT_REPLAYED.has(lower)) continue;
    if (lower === 'x-api-key') key = value;
    else out[lower] = value;
  }
  if (key === undefined) return out;
  if (key !== apiKey && key !== fingerprint(apiKey, 'ak')) return undefined;
  return { ...out, [API_KEY_HEADER]: apiKey };
}

/**
 * Resends the callback deliveries of `captured`, in order, one at a time; yields each as a new
 * ObservedExchange (the merchant's new answer, or the transport failure), numbered from 1.
 */
export async function* replayCallbacks(
  captured: AsyncIterable<ObservedExchange> | Iterable<ObservedExchange>,
  options: ReplayOptions,
  counts: ReplayCounts = { read: 0, replayed: 0, otherKey: 0 },
): AsyncGenerator<ObservedExchange> {
  const transport = transportOf(options);
  let seq = 0;
  for await (const exchange of captured) {
    counts.read++;
    if (exchange.kind !== 'callback') continue;
    const headers = replayHeaders(exchange.request.headers, options.apiKey);
    if (!headers) {
      counts.otherKey++;
      continue;
    }
    if (scrubbedHeader(headers) !== undefined) {
      counts.secretHeader = (counts.secretHeader ?? 0) + 1;
      continue;
    }
    const body = Buffer.from(exchange.request.bodyBase64, 'base64');
    const startedAt = Date.now();
    const request = {
      method: exchange.request.method,
      path: exchange.request.path,
      headers: { ...exchange.request.headers },
      bodyBase64: exchange.request.bodyBase64,
    };
    counts.replayed++;
    seq++;
    try {
      const answer = await transport.send({
        method: exchange.request.method,
        url: options.callbackUrl,
        headers,
        body,
        timeoutMs: options.timeoutMs ?? 10_000,
      });
      const answerHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) answerHeaders[name.toLowerCase()] = value;
      yield {
        v: 1,
        seq,
        kind: 'callback',
        direction: 'service→merchant',
        startedAt,
        endedAt: Date.now(),
        request,
        response: {
          status: answer.status,
          headers: answerHeaders,
          bodyBase64: Buffer.from(answer.body).toString('base64'),
        },
      };
    } catch (error) {
      yield {
        v: 1,
        seq,
        kind: 'callback',
        direction: 'service→merchant',
        startedAt,
        endedAt: Date.now(),
        request,
        upstreamError: { message: (error as Error).message, gatewayStatus: 502 },
      };
    }
  }
}
