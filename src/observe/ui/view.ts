/**
 * What the live page shows of an exchange and of a finding: a row for the list (no body), and the
 * exchange's detail with its payloads opened, on demand. Every string a browser receives has passed
 * the scrubber: secret headers are fingerprints (as in the capture), configured secrets and
 * token-like query parameters are scrubbed from paths, bodies, plaintext and messages.
 */
import type { Scrubber } from '../../secrets/scrub.js';
import { callbackField, callbackTypeEntry } from '../../spec/callback-types.js';
import { scrubExchange } from '../capture.js';
import type { ObserveFinding, ObservedExchange, ObservedMessage } from '../exchange.js';
import { bodyText, openingKey, openWith, type JudgeKeys } from '../observed.js';

/** One exchange in the page's list. */
export interface ExchangeRow {
  seq: number;
  /** When its request began (ms since the epoch) and how long it took (ms). */
  at: number;
  ms: number;
  /** Who sent the request: the merchant (orders, card close) or the service (callbacks). */
  side: 'merchant' | 'service';
  kind: ObservedExchange['kind'];
  method: string;
  /** Path and query, scrubbed. */
  path: string;
  /** The endpoint's name (`withdrawWithoutVerify`) or the callback's type (`3 withdrawal`), when known. */
  endpoint: string;
  /** The answer's status; null when the upstream failed (then `gateway` is what observe answered). */
  status: number | null;
  gateway?: 502 | 504;
  clientGone?: true;
}

/** One failed or warning finding. */
export interface FindingRow {
  id: string;
  /** The exchange it is about, when it is about one (`seq-N` results). */
  seq?: number;
  status: 'failed' | 'warning';
  rules: string[];
  title: string;
  message: string;
}

interface MessageDetail {
  headers: Record<string, string>;
  /** The body as it crossed (the ciphertext, as text), cut at WIRE_CHARS. */
  wire: string;
  truncated?: true;
  /** What the keys opened, cut at PLAIN_CHARS; or why it did not open. */
  plaintext?: string;
  notOpened?: string;
}

/** An exchange with its payloads, for the page's detail pane. */
export interface ExchangeDetail extends ExchangeRow {
  request: MessageDetail;
  response: (MessageDetail & { status: number }) | null;
  upstreamError?: string;
}

const WIRE_CHARS = 4_000;
const PLAIN_CHARS = 64_000;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function sideOf(exchange: ObservedExchange): ExchangeRow['side'] {
  return exchange.direction === 'merchant→service' ? 'merchant' : 'service';
}

/** The name a callback type is known by (`3 withdrawal`), from an opened payload. */
function callbackTypeName(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const raw = callbackField(payload as Record<string, unknown>, 'type');
  const text =
    raw !== null && typeof raw === 'object' && 'value' in raw
      ? String((raw as { value: unknown }).value)
      : raw === undefined
        ? ''
        : String(raw);
  if (!/^\d+$/.test(text)) return undefined;
  return `${text} ${callbackTypeEntry(Number(text))?.name ?? 'unknown type'}`;
}

/**
 * A callback's type, when it opens cheaply: with the public key (the default profile seals
 * callbacks with the private key), an RSA operation of microseconds. A profile that needs the
 * private key leaves the type to the detail, opened on demand.
 */
function cheapCallbackType(keys: JudgeKeys, exchange: ObservedExchange): string | undefined {
  if (
    exchange.kind !== 'callback' ||
    exchange.request.truncated ||
    !keys.publicKey ||
    openingKey(keys, 'callback') !== keys.publicKey
  )
    return undefined;
  const opened = openWith(keys, 'callback', bodyText(exchange.request, 'latin1'));
  return opened !== 'no-key' && 'opened' in opened ? callbackTypeName(opened.opened.value) : undefined;
}

/** The list row of an exchange (its path scrubbed; no body). */
export function exchangeRow(exchange: ObservedExchange, keys: JudgeKeys, scrubber: Scrubber): ExchangeRow {
  // Only the path shows in a row: the headers are scrubbed when the exchange is opened.
  const path = scrubber.text(exchange.request.path);
  const endpoint =
    exchange.kind === 'callback'
      ? (cheapCallbackType(keys, exchange) ?? 'callback')
      : (path.split('?')[0]!.split('/').pop() ?? '') || path;
  return {
    seq: exchange.seq,
    at: exchange.startedAt,
    ms: Math.max(0, exchange.endedAt - exchange.startedAt),
    side: sideOf(exchange),
    kind: exchange.kind,
    method: exchange.request.method,
    path,
    endpoint,
    status: exchange.response?.status ?? null,
    ...(exchange.upstreamError ? { gateway: exchange.upstreamError.gatewayStatus } : {}),
    ...(exchange.clientGone ? { clientGone: true as const } : {}),
  };
}

/** The `seq` a result is about: `seq-N` in its case (the tally's naming), else its evidence's seq. */
function seqOf(finding: ObserveFinding): number | undefined {
  const match = /^seq-(\d+)$/.exec(finding.case);
  if (match) return Number(match[1]);
  const evidence = finding.evidence as { seq?: unknown } | undefined;
  return typeof evidence?.seq === 'number' ? evidence.seq : undefined;
}

/** The failed and warning findings as the page lists them (passes and skips are the report's). */
export function findingRows(findings: readonly ObserveFinding[], scrubber: Scrubber): FindingRow[] {
  const rows: FindingRow[] = [];
  for (const finding of findings) {
    if (finding.status !== 'failed' && finding.status !== 'warning') continue;
    const seq = seqOf(finding);
    rows.push({
      id: scrubber.text(finding.id),
      ...(seq === undefined ? {} : { seq }),
      status: finding.status,
      rules: finding.rules,
      title: scrubber.text(finding.title),
      message: scrubber.text(finding.message),
    });
  }
  return rows;
}

/** The Base64 text that carries a message's ciphertext: a callback's whole body, an order's form field `data`, an answer's JSON `data`. */
function sealedText(
  exchange: ObservedExchange,
  message: ObservedMessage,
  part: 'request' | 'response',
): string | undefined {
  const text = bodyText(message, part === 'request' ? 'latin1' : 'utf8').trim();
  if (part === 'request' && exchange.kind === 'callback') return text;
  if (part === 'request') return new URLSearchParams(text).get('data')?.replace(/ /g, '+') ?? undefined;
  try {
    const data = (JSON.parse(text) as { data?: unknown } | null)?.data;
    return typeof data === 'string' && data !== '' ? data : undefined;
  } catch {
    return undefined;
  }
}

/** A message with its payload opened (when the keys open it), every string scrubbed. */
function messageDetail(
  exchange: ObservedExchange,
  message: ObservedMessage,
  part: 'request' | 'response',
  keys: JudgeKeys,
  scrubber: Scrubber,
): MessageDetail {
  const detail: MessageDetail = {
    headers: message.headers,
    wire: scrubber.text(cut(bodyText(message, 'latin1'), WIRE_CHARS)),
  };
  if (message.truncated)
    return {
      ...detail,
      truncated: true,
      notOpened: 'the body was longer than observe records (--max-body): not opened',
    };
  const sealed = exchange.kind === 'other' ? undefined : sealedText(exchange, message, part);
  if (sealed === undefined) return detail;
  const opened = openWith(keys, exchange.kind === 'callback' ? 'callback' : part, sealed);
  if (opened === 'no-key')
    return {
      ...detail,
      notOpened: `no key to open it (${part === 'request' && exchange.kind !== 'callback' ? '--private-key' : '--public-key'})`,
    };
  if ('error' in opened) return { ...detail, notOpened: scrubber.text(opened.error) };
  return { ...detail, plaintext: scrubber.text(cut(opened.opened.text, PLAIN_CHARS)) };
}

/** An exchange's detail: its row, headers as the capture keeps them, bodies as they crossed and as the keys open them. */
export function exchangeDetail(exchange: ObservedExchange, keys: JudgeKeys, scrubber: Scrubber): ExchangeDetail {
  const shown = scrubExchange(exchange, scrubber);
  const row = exchangeRow(exchange, keys, scrubber);
  const request = messageDetail(shown, shown.request, 'request', keys, scrubber);
  const response = shown.response
    ? { status: shown.response.status, ...messageDetail(shown, shown.response, 'response', keys, scrubber) }
    : null;
  let endpoint = row.endpoint;
  if (exchange.kind === 'callback' && request.plaintext !== undefined) {
    try {
      endpoint = callbackTypeName(JSON.parse(request.plaintext)) ?? endpoint;
    } catch {
      // A plaintext that is not JSON names no type.
    }
  }
  return {
    ...row,
    endpoint,
    request,
    response,
    ...(shown.upstreamError ? { upstreamError: shown.upstreamError.message } : {}),
  };
}
