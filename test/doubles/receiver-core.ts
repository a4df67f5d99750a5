/**
 * What a merchant's callback receiver decides, independent of the web framework, written from
 * the interface and the manual alone (no code of src/). The Express and Fastify receivers wrap it the
 * way their documentation shows raw bodies.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { decryptWithPublic, DoubleCryptoError, numberText, parseExact, strictUtf8 } from './crypto.js';

/** A merchant credential and its validity window (CB-KEY-401). */
export interface ApiKeyWindow {
  key: string;
  notBefore?: Date;
  notAfter?: Date;
}

/** True when the header carries a known key inside its validity window. */
export function keyIsValid(header: string | string[] | undefined, keys: ApiKeyWindow[], now = new Date()): boolean {
  if (typeof header !== 'string' || header === '') return false;
  const known = keys.find((entry) => entry.key === header);
  if (!known) return false;
  if (known.notBefore && now < known.notBefore) return false;
  if (known.notAfter && now > known.notAfter) return false;
  return true;
}

/** A field read under either spelling: the interface's (`txid`, `chain`) or the provider docs' (`txId`, `chainName`). */
function field(payload: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = payload[name];
    if (typeof value === 'string' && value !== '') return value;
    const digits = numberText(value);
    if (digits !== undefined) return digits;
  }
  return undefined;
}

/** How a receiver treats a callback type it does not know. */
export type UnknownTypePolicy = 'refuse' | 'process-as-other';

/** The idempotency key of a payload (the interface's table: CB-ID-*), or an error text. */
export function idempotencyKey(
  payload: Record<string, unknown>,
  unknownTypes: UnknownTypePolicy,
): { key: string } | { error: string } {
  const typeText = numberText(payload.type);
  if (typeText === undefined || !/^\d+$/.test(typeText)) return { error: 'type is not an integer' };
  const type = Number(typeText);
  if (type === 1) {
    // CB-ID-DEPOSIT: combined hash of (txid, chain, symbol, toAddress); wrapped-contract twins stay apart.
    const parts = [
      field(payload, 'txid', 'txId'),
      field(payload, 'chain', 'chainName'),
      field(payload, 'symbol'),
      field(payload, 'toAddress'),
    ];
    if (parts.some((part) => part === undefined)) return { error: 'a deposit needs txid, chain, symbol and toAddress' };
    return { key: `deposit:${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}` };
  }
  if (type === 3) {
    // CB-ID-WITHDRAW: txid alone, whatever the trackingId.
    const txid = field(payload, 'txid', 'txId');
    if (txid === undefined) return { error: 'a withdrawal needs txid' };
    return { key: `withdrawal:${txid}` };
  }
  if (!(type >= 1 && type <= 7) && unknownTypes === 'refuse') return { error: `unknown callback type ${type}` };
  // CB-ID-OTHER: type + trackingId + callBackId; never requestUUID (CB-UUID).
  const trackingId = field(payload, 'trackingId');
  if (trackingId === undefined) return { error: 'trackingId is required' };
  return { key: `other:${JSON.stringify([type, trackingId, field(payload, 'callBackId') ?? ''])}` };
}

/** The result of opening one body: the payload with its exact text, or why not. */
export type Opened = { payload: Record<string, unknown>; text: string } | { error: string };

/** Raw body → strict Base64 → public-key decryption per block → UTF-8 → JSON object with exact numbers. */
export function openBody(raw: Buffer, publicKey: KeyObject): Opened {
  try {
    // The raw body is ASCII Base64; a '+' stays a '+' because nothing form-decodes it.
    const text = strictUtf8(decryptWithPublic(raw.toString('latin1'), publicKey));
    const payload = parseExact(text);
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      return { error: 'payload is not a JSON object' };
    return { payload: payload as Record<string, unknown>, text };
  } catch (error) {
    if (error instanceof DoubleCryptoError) return { error: error.message };
    throw error;
  }
}

/**
 * What a delivery gets while an identical one is still being processed: `wait` for it and then
 * acknowledge, or `busy` (a non-zero errCode now: the event is not processed yet, so it is not yet a
 * duplicate of a processed event; the service's retry then gets success directly).
 */
export type InFlightPolicy = 'wait' | 'busy';

/** An in-memory processed-event store: one processing per key, also under concurrency. */
export class ProcessedStore {
  /** `withCount` adds a field of its own beside `processed` in the probe body. */
  constructor(
    private readonly inFlightPolicy: InFlightPolicy = 'wait',
    private readonly withCount = false,
  ) {}
  private readonly done = new Set<string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Each processed payload's decrypted text, in processing order (the probe). */
  readonly processed: string[] = [];

  /**
   * Runs `work` once per key. A duplicate that arrives while the first is still processing waits
   * for it; a failed processing releases the key, so the service's retry can process it.
   */
  async once(key: string, text: string, work: () => Promise<void>): Promise<'processed' | 'duplicate' | 'busy'> {
    if (this.inFlightPolicy === 'busy' && !this.done.has(key) && this.inFlight.has(key)) return 'busy';
    for (let round = 0; round < 3; round++) {
      if (this.done.has(key)) return 'duplicate';
      const running = this.inFlight.get(key);
      if (!running) break;
      await running.catch(() => undefined);
    }
    if (this.done.has(key)) return 'duplicate';
    if (this.inFlight.has(key)) throw new Error('still processing');
    const job = (async () => {
      await work();
      this.processed.push(text);
      this.done.add(key);
    })();
    this.inFlight.set(key, job);
    try {
      await job;
      return 'processed';
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** The probe body: each entry the decrypted JSON exactly as received. */
  probeBody(): string {
    return `{"processed":[${this.processed.join(',')}]${this.withCount ? `,"count":${this.processed.length}` : ''}}`;
  }
}

/** Simulated business processing: some I/O, so that concurrent duplicates really overlap. */
export function businessWork(ms = 5): () => Promise<void> {
  return () => new Promise((resolve) => setTimeout(resolve, ms));
}
