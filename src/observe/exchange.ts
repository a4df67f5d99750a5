/**
 * The seam of `wallet-conformance observe` (a decrypting conformance proxy): what the proxy records
 * of one exchange, and what judges a stream of them. The proxy (`proxy.ts`, live) and a capture
 * file (`capture.ts`, JSON lines, replayed offline) both produce `ObservedExchange`s; one `Judge`
 * consumes them in order and yields findings as they happen, then a report.
 *
 * Bytes are kept exactly as they crossed the wire (Base64 of the raw body), so a replay judges the
 * same bytes the live run saw, and `verify merchant --replay` can resend a callback byte for byte.
 */
import type { CheckResult, Report } from '../runner/api.js';

/** Which leg of the interface an exchange belongs to (by path and direction). */
export type ExchangeKind = 'energy' | 'withdraw' | 'card-close' | 'callback' | 'other';

/** One HTTP message as it crossed the proxy. Header names lower-case; repeated headers joined by ", ". */
export interface ObservedMessage {
  headers: Record<string, string>;
  /** The raw body, Base64 (standard, padded). */
  bodyBase64: string;
  /**
   * The body was longer than the proxy records of one body (1 MiB by default): it was forwarded
   * whole, `bodyBase64` holds only its first bytes. A judge cannot judge the body (not its Base64,
   * nor its decryption), only the rest of the message.
   */
  truncated?: true;
}

interface ObservedRequest extends ObservedMessage {
  method: string;
  /** Path and query as the client sent them (no scheme or host). */
  path: string;
}

interface ObservedResponse extends ObservedMessage {
  status: number;
}

/** One request and its answer, or what the proxy answered instead when the upstream failed. */
export interface ObservedExchange {
  /** Format version of a capture line. */
  v: 1;
  /** Sequence number within one observe run or capture, from 1. */
  seq: number;
  kind: ExchangeKind;
  /** `merchant→service` (orders, card close) or `service→merchant` (callbacks). */
  direction: 'merchant→service' | 'service→merchant';
  /** When the request's first byte arrived and when the answer's last byte left (ms since the epoch). */
  startedAt: number;
  endedAt: number;
  request: ObservedRequest;
  /** The upstream's answer, forwarded unchanged. Absent when the upstream failed. */
  response?: ObservedResponse;
  /**
   * The upstream failed (refused, reset, timed out, TLS): what happened, and the gateway status the
   * proxy answered with (502, or 504 on a deadline). A finding against the upstream's side.
   */
  upstreamError?: { message: string; gatewayStatus: 502 | 504 };
  /**
   * The client closed its connection after sending its whole request, before the answer reached
   * it: the upstream had the request (and may have acted on it), so the exchange is recorded and
   * judged; the answer (or failure) is the upstream's, the client never received it.
   */
  clientGone?: true;
}

/** The keys and secrets the judge may use to look inside; any of them may be absent. */
export interface ObserveKeys {
  /** PEM text of the public key (opens callbacks sealed with the private half, seals nothing). */
  publicKeyPem?: string;
  /** PEM text of the private key (opens order requests and callbacks sealed with the public half). */
  privateKeyPem?: string;
  /** The merchant's API key, to judge the key header of requests and callbacks. */
  apiKey?: string;
}

/** One result the moment it is known: printed as one console line live, kept for the report. */
export type ObserveFinding = CheckResult;

/** Judges observed exchanges against the rules, in order, with bounded memory. */
export interface Judge {
  /** Judge one exchange (in `seq` order); returns the findings it settles now (failed/warning ones print live). */
  accept(exchange: ObservedExchange): ObserveFinding[];
  /** End of the stream: settles what waited for later exchanges (retries, order callbacks) and builds the report. */
  finish(): ObserveResult;
  /**
   * The report so far, while the stream goes on (observe's reports while it runs): settles nothing
   * that waits for later exchanges. After finish(), the final result.
   */
  snapshot?(): ObserveResult;
  /**
   * Counts `count` exchanges that never reached `accept`, for `reason` (shed by a full queue, cut
   * at the stop): they are part of the report's "not judged".
   */
  unjudged?(reason: string, count: number): void;
}

/** The end of an observe run or replay. */
export interface ObserveResult {
  exchanges: number;
  /** The report (same model and verdict rules as `verify`; rules it cannot see are `skipped`, "not observable"). */
  report: Report;
  /** Events forgotten by the stream window (bounded memory), reported so a reader knows. */
  forgottenEvents: number;
  /** Judgements the observation could not make (skipped findings, each counted): the summary line's `not judged`. */
  notJudged: number;
}
