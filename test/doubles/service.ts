/**
 * An independent wallet service, written from the interface, spec/rules.yaml and the manual alone (no code
 * of src/), on plain node:http. It makes its own legal choices on every open point (U-*), on
 * purpose unlike the project's emulator:
 *
 * - {base_url} and {card_base_url} are two different path prefixes on one server (`/gateway`,
 *   `/card-svc`); the control API lives under `{base_url}/__control` and offers the documented four
 *   routes only (no cards route, no GET energy).
 * - Business codes (U-CODES) are 1001.. (table below); a failure envelope has no `data` at all.
 * - A Content-Type other than the form is HTTP 400 with a JSON `{code, message}` (U-CODES), not an
 *   envelope. Bodies over 256 KiB are HTTP 413 JSON (U-LIMITS).
 * - The energy query refuses anything but ENERGY/TRON (ENERGY-REQ allows either).
 * - Withdrawal symbols: /^[A-Z0-9]{2,10}$/; amounts: > 0, at most 30 integer and 12 fraction
 *   digits (U-LIMITS), a JSON number or a decimal string (BigDecimal binding), exponents allowed.
 * - An energy lease lowers the balance when its delegation settles, `leaseSettleMs` after the
 *   order (U-STATES: whether and when a lease lowers the energy); energyMaxCount is always
 *   floor(balance / costPerTx) of the balance at that moment (ENERGY-FLOOR).
 * - expiryHours of a lease: 1..720 (U-LIMITS); a withdrawal's expiryHours is ignored.
 * - tenantUserId must be digits: the result types it as an integer (ORDER-RES).
 * - Card close: no card registry (U-STATES). Any card with five non-empty string fields and this
 *   merchant's id closes once; a second close of the same card, or a closeSerialNo used before, is
 *   refused. Failures are HTTP 200 with success false and `data: {bizId: "", status: "REJECTED"}`;
 *   a non-JSON Content-Type or body is HTTP 400 in the same shape. No authentication (U-CARD-AUTH).
 * - Callbacks spell fields as the provider's public docs do (`txId`, `chainName`), amounts are JSON
 *   numbers with exact digits (U-CB-FIELDS); default retry schedule 300 ms, 1 s, 3 s, 10 s, 30 s
 *   (6 attempts, U-RETRY). A withdrawal order completes `withdrawalDelayMs` later and emits its
 *   type-3 callback (its callBackId, the exact amount) to the callback URL set at that moment.
 *
 * Options switch to other legal readings: `leaseSettleMs: 0` (a lease lowers the energy at once),
 * `amountDigits` (other caps), `callbackAmounts: 'string'` (decimal strings), `cardAuth: 'api-key'`
 * (card close needs the merchant's X-API-KEY, U-CARD-AUTH).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  decryptWithPrivate,
  encryptWithPrivate,
  LosslessNumber,
  numberText,
  parseExact,
  privateKeyOf,
  strictUtf8,
  stringifyExact,
} from './crypto.js';

/** Business codes of this service (U-CODES). */
export const CODES = {
  missingData: 1001,
  badData: 1002,
  cannotDecrypt: 1003,
  notJson: 1004,
  badField: 1005,
  wrongUser: 1006,
  unsupportedResource: 1007,
  tenantType: 1008,
  duplicateCallBackId: 1009,
  expiryHours: 1010,
  leaseAmount: 1011,
  withdrawalAmount: 1012,
  insufficientEnergy: 1013,
  unsupportedSymbol: 1014,
  internal: 1099,
} as const;

/** Options of {@link startIndependentService}. */
export interface IndependentServiceOptions {
  port?: number;
  /** The merchant's key pair; the service uses the private half (PEM or KeyObject). */
  keys: { privateKey: string | KeyObject };
  apiKey: string;
  forbiddenKey: string;
  expiredKey: string;
  /** A key whose validity window has not begun; refused like the expired key (ERR-401). */
  futureKey?: string;
  userId: number;
  controlToken: string;
  energy?: { balance: bigint; costPerTx: bigint };
  /** When a lease lowers the balance: after this many ms (default 1500); 0 = at once (U-STATES). */
  leaseSettleMs?: number;
  /** Digit caps of a withdrawal amount (U-LIMITS); default 30 integer, 12 fraction digits. */
  amountDigits?: { integer: number; fraction: number };
  /** Card close authentication (U-CARD-AUTH): none (default), or the merchant's X-API-KEY required. */
  cardAuth?: 'none' | 'api-key';
  /** Callback amounts as JSON numbers (default) or decimal strings (U-CB-FIELDS). */
  callbackAmounts?: 'number' | 'string';
  /** Card close failures as HTTP 200 (default) or as 4xx statuses with the same body (U-CARD-VALUES). */
  cardFailureStatus?: 'http-200' | 'http-4xx';
  /** A request the service cannot read (form, Base64, decryption, JSON, field types) as a failure envelope (default) or HTTP 400 JSON (U-CODES). */
  requestFailures?: 'envelope' | 'http-400';
  /** POST callbacks answers 202 Accepted (the event is queued) instead of 200. */
  controlAccepted?: boolean;
  /** 401 and 403 bodies of order submission: the energy query's (default) or this service's own `{code: 40100, message}` (U-CODES). */
  orderAuthBodies?: 'table' | 'own';
  /**
   * Lean callbacks: only the fields the interface names for a type plus requestUUID, tenantUserId as
   * a number, no `business`/`fromAddress`/`txIndex`, no trackingId on deposits and withdrawals (their
   * keys do not use it). U-CB-FIELDS: every other field, and every field's type, is open.
   */
  callbackLean?: boolean;
  /** The callback Content-Type: the bare form type (default) or with `; charset=UTF-8`, as Java HTTP clients send it. */
  callbackCharset?: boolean;
  withdrawalDelayMs?: number;
  retryDelaysMs?: number[];
}

/** One delivery attempt, as the control API reports it. */
export interface Attempt {
  at: string;
  requestUUID: string;
  status: number;
  answer: string;
  verdict: 'acknowledged' | 'failed';
}

/** A running independent service. */
export interface IndependentService {
  /** {base_url} */
  url: string;
  /** {card_base_url} */
  cardBaseUrl: string;
  /** Completes a withdrawal order now: emits its type-3 callback (callBackId, exact amount). */
  completeWithdrawal(callBackId: string): string | undefined;
  close(): Promise<void>;
}

interface Order {
  callBackId: string;
  kind: 'withdrawal' | 'lease';
  tenantUserId: string;
  symbol: string;
  chainName: string;
  toAddr: string;
  amount: LosslessNumber;
  completed: boolean;
}

const BASE = '/gateway';
const CARD_BASE = '/card-svc';
const BODY_LIMIT = 256 * 1024;

/** Exact decimal text → parts, or undefined when it is not a decimal. Accepts an exponent (BigDecimal). */
function decimalOf(text: string): { negative: boolean; integer: string; fraction: string } | undefined {
  const match = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const whole = match[2] ?? '';
  let digits = whole + (match[3] ?? '');
  let point = whole.length + Number(match[4] ?? '0');
  if (Math.abs(point) > 1000) return undefined;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const integer = digits.slice(0, point).replace(/^0+/, '');
  const fraction = digits.slice(point).replace(/0+$/, '');
  return { negative: match[1] === '-', integer, fraction };
}

function amountText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return numberText(value);
}

function isIntegerNumber(value: unknown): value is LosslessNumber {
  const text = numberText(value);
  return text !== undefined && /^-?\d+$/.test(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return 'too-large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : stringifyExact(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** Starts the independent service on 127.0.0.1. */
export async function startIndependentService(options: IndependentServiceOptions): Promise<IndependentService> {
  const privateKey = privateKeyOf(options.keys.privateKey);
  const energy = { balance: options.energy?.balance ?? 5_000_000n, costPerTx: options.energy?.costPerTx ?? 65_000n };
  const leaseSettleMs = options.leaseSettleMs ?? 1500;
  const withdrawalDelayMs = options.withdrawalDelayMs ?? 150;
  const defaultRetries = options.retryDelaysMs ?? [300, 1000, 3000, 10_000, 30_000];
  const digitCap = options.amountDigits ?? { integer: 30, fraction: 12 };
  const amountValue = (literal: string) =>
    options.callbackAmounts === 'string' ? literal : new LosslessNumber(literal);
  const orders = new Map<string, Order>();
  const closedCards = new Set<string>();
  const usedSerials = new Set<string>();
  const attempts = new Map<string, Attempt[]>();
  const timers = new Set<NodeJS.Timeout>();
  let callbackUrl: string | undefined;
  let closing = false;

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closing) fn();
    }, ms);
    timers.add(timer);
  };

  const envelopeOk = (res: ServerResponse, result: unknown) =>
    sendJson(res, 200, {
      code: 0,
      message: '',
      data: encryptWithPrivate(Buffer.from(stringifyExact(result), 'utf8'), privateKey),
    });
  const envelopeFail = (res: ServerResponse, code: number, message: string) => sendJson(res, 200, { code, message });
  /** A request the service cannot read: a failure envelope, or HTTP 400 JSON (U-CODES). */
  const requestFail = (res: ServerResponse, code: number, message: string) =>
    options.requestFailures === 'http-400'
      ? sendJson(res, 400, { code: String(code), message })
      : envelopeFail(res, code, message);

  // --- callbacks ---------------------------------------------------------------------------

  /** Delivers one event once, then retries per `delays` until HTTP 200 with errCode the number 0 (CB-ERRCODE). */
  const deliver = (
    payload: Record<string, unknown>,
    trackingId: string,
    delays: number[],
    attempt = 0,
  ): Promise<void> =>
    new Promise((done) => {
      const url = callbackUrl;
      if (!url || closing) return done();
      // CB-UUID: every attempt is a delivery and gets its own requestUUID.
      const requestUUID = randomUUID();
      const body = encryptWithPrivate(Buffer.from(stringifyExact({ ...payload, requestUUID }), 'utf8'), privateKey);
      const record = (status: number, answer: string, acknowledged: boolean) => {
        const list = attempts.get(trackingId) ?? [];
        list.push({
          at: new Date().toISOString(),
          requestUUID,
          status,
          answer: answer.slice(0, 500),
          verdict: acknowledged ? 'acknowledged' : 'failed',
        });
        attempts.set(trackingId, list);
        const wait = delays[attempt];
        if (!acknowledged && wait !== undefined)
          later(wait, () => void deliver(payload, trackingId, delays, attempt + 1));
        done();
      };
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return record(0, 'bad callback URL', false);
      }
      const req = httpRequest(
        target,
        {
          method: 'POST',
          headers: {
            'content-type': options.callbackCharset
              ? 'application/x-www-form-urlencoded; charset=UTF-8'
              : 'application/x-www-form-urlencoded',
            'x-api-key': options.apiKey,
            'content-length': Buffer.byteLength(body),
          },
          timeout: 5000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const answer = Buffer.concat(chunks).toString('utf8');
            // CB-ERRCODE: only HTTP 200 with errCode the number 0 is a success; "0", a missing errCode or another status is retried.
            const errCode = (() => {
              try {
                return (JSON.parse(answer) as { errCode?: unknown } | null)?.errCode;
              } catch {
                return undefined;
              }
            })();
            record(res.statusCode ?? 0, answer, res.statusCode === 200 && errCode === 0);
          });
          res.on('error', () => record(res.statusCode ?? 0, 'response error', false));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error) => record(0, error.message, false));
      req.end(body);
    });

  /** The provider-docs payload of one event type, fields spelt `txId`/`chainName` (U-CB-FIELDS). */
  const payloadOf = (type: number, trackingId: string): Record<string, unknown> => {
    const common = {
      type: new LosslessNumber(String(type)),
      trackingId,
      tenantUserId: '20931',
      business: new LosslessNumber('0'),
    };
    const txId = randomBytes(32).toString('hex');
    const callBackId = `ind-${randomUUID()}`;
    const amount = amountValue('1000.000001');
    switch (type) {
      case 1:
        return {
          ...common,
          txId,
          chainName: 'TRON',
          symbol: 'USDT',
          toAddress: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
          fromAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
          amount,
          txIndex: new LosslessNumber('0'),
        };
      case 2:
        return {
          ...common,
          callBackId,
          chainName: 'TRON',
          symbol: 'USDT',
          toAddress: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
          amount,
        };
      case 3:
        return {
          ...common,
          txId,
          callBackId,
          chainName: 'TRON',
          symbol: 'USDT',
          toAddress: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
          amount,
        };
      case 4:
        return { ...common, chainName: 'TRON', address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' };
      case 5:
        return { ...common, callBackId, chainName: 'TRON', address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU0' };
      default:
        return { ...common, callBackId, chainName: 'TRON', symbol: 'USDT', amount };
    }
  };

  /** Emits one event (`copies` identical deliveries) and returns its trackingId. */
  const emit = (
    type: number,
    fields: Record<string, unknown>,
    copies: number,
    concurrent: boolean,
    delayMs: number,
    delays: number[],
  ): string => {
    const trackingId = typeof fields.trackingId === 'string' ? fields.trackingId : `trk-${randomUUID()}`;
    const payload = payloadOf(type, trackingId);
    if (options.callbackLean) {
      for (const extra of ['business', 'fromAddress', 'txIndex']) delete payload[extra];
      payload.tenantUserId = new LosslessNumber('20931');
      if (type === 1 || type === 3) delete payload.trackingId;
    }
    // A field given in the interface's spelling replaces ours in the provider's spelling.
    if ('txid' in fields) delete payload.txId;
    if ('chain' in fields) delete payload.chainName;
    Object.assign(payload, fields);
    attempts.set(trackingId, attempts.get(trackingId) ?? []);
    later(delayMs, () => {
      void (async () => {
        if (concurrent) await Promise.all(Array.from({ length: copies }, () => deliver(payload, trackingId, delays)));
        else for (let i = 0; i < copies; i++) await deliver(payload, trackingId, delays);
      })();
    });
    return trackingId;
  };

  const completeWithdrawal = (callBackId: string): string | undefined => {
    const order = orders.get(callBackId);
    if (!order || order.kind !== 'withdrawal' || order.completed) return undefined;
    order.completed = true;
    return emit(
      3,
      {
        tenantUserId: order.tenantUserId,
        callBackId: order.callBackId,
        chainName: order.chainName,
        symbol: order.symbol,
        toAddress: order.toAddr,
        amount: amountValue(order.amount.value),
      },
      1,
      false,
      0,
      defaultRetries,
    );
  };

  // --- order endpoints ---------------------------------------------------------------------

  /** Key, Content-Type, form, Base64, decryption and JSON; the plain object, or undefined when answered. */
  const openRequest = async (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: 'energy' | 'order',
  ): Promise<Record<string, unknown> | undefined> => {
    // ERR-401/ERR-403 fix the bodies of the energy query; order submission's are open (U-CODES).
    const own = endpoint === 'order' && options.orderAuthBodies === 'own';
    const key = req.headers['x-api-key'];
    if (key === options.forbiddenKey) {
      sendJson(
        res,
        403,
        own ? { code: 40300, message: 'this key may not submit orders' } : { code: 'FORBIDDEN', message: 'forbidden' },
      );
      return undefined;
    }
    if (typeof key !== 'string' || key !== options.apiKey) {
      // ERR-401: missing, unknown, expired and not-yet-valid keys alike.
      sendJson(
        res,
        401,
        own
          ? { code: 40100, message: 'X-API-KEY missing, unknown or expired' }
          : { code: 'UNAUTHORIZED', message: 'unauthorized' },
      );
      return undefined;
    }
    if (mediaType(req.headers['content-type']) !== 'application/x-www-form-urlencoded') {
      sendJson(res, 400, {
        code: 'BAD_CONTENT_TYPE',
        message: 'Content-Type must be application/x-www-form-urlencoded',
      });
      return undefined;
    }
    const body = await readBody(req);
    if (body === 'too-large') {
      sendJson(res, 413, { code: 'TOO_LARGE', message: 'request body too large' });
      return undefined;
    }
    const form = new URLSearchParams(body.toString('utf8'));
    const values = form.getAll('data');
    const data = values[0];
    if (values.length !== 1 || data === undefined || data === '') {
      requestFail(res, CODES.missingData, 'form field data is required exactly once');
      return undefined;
    }
    let plainBytes: Buffer;
    try {
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw new Error('data does not match ^[A-Za-z0-9+/]+={0,2}$');
      plainBytes = decryptWithPrivate(data, privateKey);
    } catch (error) {
      requestFail(
        res,
        /match|Base64/.test((error as Error).message) ? CODES.badData : CODES.cannotDecrypt,
        `data cannot be read: ${(error as Error).message}`,
      );
      return undefined;
    }
    let plain: unknown;
    try {
      plain = parseExact(strictUtf8(plainBytes));
    } catch (error) {
      requestFail(res, CODES.notJson, (error as Error).message);
      return undefined;
    }
    if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
      requestFail(res, CODES.notJson, 'data must hold a JSON object');
      return undefined;
    }
    return plain as Record<string, unknown>;
  };

  const energyQuery = async (req: IncomingMessage, res: ServerResponse) => {
    const plain = await openRequest(req, res, 'energy');
    if (!plain) return;
    if (typeof plain.symbol !== 'string' || typeof plain.chainName !== 'string')
      return requestFail(res, CODES.badField, 'symbol and chainName are required strings');
    if (plain.symbol !== 'ENERGY' || plain.chainName !== 'TRON')
      return envelopeFail(res, CODES.unsupportedResource, 'only ENERGY on TRON is supported');
    envelopeOk(res, {
      chainName: 'TRON',
      symbol: 'ENERGY',
      energyMaxCount: new LosslessNumber(String(energy.balance / energy.costPerTx)),
    });
  };

  const orderSubmission = async (req: IncomingMessage, res: ServerResponse) => {
    const plain = await openRequest(req, res, 'order');
    if (!plain) return;
    const { userId, tenantUserId, tenantType, callBackId, symbol, chainName, toAddr, amount, expiryHours } = plain;
    if (!isIntegerNumber(userId)) return requestFail(res, CODES.badField, 'userId is a required integer');
    if (typeof tenantUserId !== 'string' || !/^\d{1,18}$/.test(tenantUserId))
      return requestFail(res, CODES.badField, 'tenantUserId is a required string of digits');
    if (!isIntegerNumber(tenantType)) return requestFail(res, CODES.badField, 'tenantType is a required integer');
    if (typeof callBackId !== 'string' || callBackId === '')
      return requestFail(res, CODES.badField, 'callBackId is a required string');
    if (typeof symbol !== 'string' || symbol === '')
      return requestFail(res, CODES.badField, 'symbol is a required string');
    if (typeof chainName !== 'string' || chainName === '')
      return requestFail(res, CODES.badField, 'chainName is a required string');
    if (typeof toAddr !== 'string' || toAddr === '')
      return requestFail(res, CODES.badField, 'toAddr is a required string');
    const amountLiteral = amountText(amount);
    const decimal = amountLiteral === undefined ? undefined : decimalOf(amountLiteral);
    if (amountLiteral === undefined || !decimal)
      return requestFail(res, CODES.badField, 'amount is a required decimal');
    if (BigInt(numberText(userId) ?? '-1') !== BigInt(options.userId))
      return envelopeFail(res, CODES.wrongUser, 'userId does not belong to this X-API-KEY');
    if (numberText(tenantType) !== '1') return envelopeFail(res, CODES.tenantType, 'tenantType must be 1');
    if (orders.has(callBackId)) return envelopeFail(res, CODES.duplicateCallBackId, 'callBackId already used');
    const exactAmount = new LosslessNumber(amountLiteral.replace(/^\+/, ''));
    if (symbol === 'ENERGY') {
      if (
        !isIntegerNumber(expiryHours) ||
        BigInt(numberText(expiryHours) ?? '0') < 1n ||
        BigInt(numberText(expiryHours) ?? '0') > 720n
      )
        return envelopeFail(res, CODES.expiryHours, 'expiryHours (1..720) is required for ENERGY');
      if (decimal.negative || decimal.fraction !== '' || decimal.integer === '' || decimal.integer.length > 12)
        return envelopeFail(res, CODES.leaseAmount, 'a lease amount is a whole number of transactions >= 1');
      const count = BigInt(decimal.integer);
      const needed = count * energy.costPerTx;
      if (needed > energy.balance) return envelopeFail(res, CODES.insufficientEnergy, 'insufficient energy');
      // U-STATES: the delegation settles later; only then does the balance drop.
      const settle = () => {
        energy.balance = energy.balance >= needed ? energy.balance - needed : 0n;
      };
      if (leaseSettleMs === 0) settle();
      else later(leaseSettleMs, settle);
      orders.set(callBackId, {
        callBackId,
        kind: 'lease',
        tenantUserId,
        symbol,
        chainName,
        toAddr,
        amount: exactAmount,
        completed: true,
      });
    } else {
      if (!/^[A-Z0-9]{2,10}$/.test(symbol))
        return envelopeFail(res, CODES.unsupportedSymbol, `unsupported symbol ${symbol}`);
      if (decimal.negative || (decimal.integer === '' && decimal.fraction === ''))
        return envelopeFail(res, CODES.withdrawalAmount, 'a withdrawal amount is > 0');
      if (decimal.integer.length > digitCap.integer || decimal.fraction.length > digitCap.fraction)
        return envelopeFail(
          res,
          CODES.withdrawalAmount,
          `amount has more than ${digitCap.integer} integer or ${digitCap.fraction} fraction digits`,
        );
      orders.set(callBackId, {
        callBackId,
        kind: 'withdrawal',
        tenantUserId,
        symbol,
        chainName,
        toAddr,
        amount: exactAmount,
        completed: false,
      });
      later(withdrawalDelayMs, () => void completeWithdrawal(callBackId));
    }
    envelopeOk(res, { tenantUserId: new LosslessNumber(BigInt(tenantUserId).toString()), id: callBackId });
  };

  // --- card close ----------------------------------------------------------------------------

  const cardAnswer = (
    res: ServerResponse,
    status: number,
    failure?: { code: string; message: string; en: string; detail: string },
    bizId?: string,
  ) => {
    const requestId = randomUUID();
    if (!failure)
      return sendJson(res, status, {
        success: true,
        errorCode: '',
        errorMessage: '',
        errorMessageEn: '',
        detailMessage: '',
        requestId,
        data: { bizId, status: 'CLOSED' },
      });
    sendJson(res, status, {
      success: false,
      errorCode: failure.code,
      errorMessage: failure.message,
      errorMessageEn: failure.en,
      detailMessage: failure.detail,
      requestId,
      data: { bizId: '', status: 'REJECTED' },
    });
  };

  /** The HTTP status of a card close failure (U-CARD-VALUES). */
  const cardStatus = (status: number) => (options.cardFailureStatus === 'http-4xx' ? status : 200);

  const cardClose = async (req: IncomingMessage, res: ServerResponse) => {
    if (options.cardAuth === 'api-key' && req.headers['x-api-key'] !== options.apiKey) {
      req.resume();
      return cardAnswer(res, 401, {
        code: 'E401',
        message: '未授权',
        en: 'unauthorized: X-API-KEY required',
        detail: '',
      });
    }
    if (mediaType(req.headers['content-type']) !== 'application/json')
      return cardAnswer(res, 400, {
        code: 'E100',
        message: '请求格式错误',
        en: 'Content-Type must be application/json',
        detail: `got ${req.headers['content-type'] ?? 'none'}`,
      });
    const body = await readBody(req);
    if (body === 'too-large')
      return cardAnswer(res, 413, {
        code: 'E101',
        message: '请求过大',
        en: 'request body too large',
        detail: `limit ${BODY_LIMIT} bytes`,
      });
    let plain: unknown;
    try {
      plain = parseExact(strictUtf8(body));
    } catch (error) {
      return cardAnswer(res, 400, {
        code: 'E100',
        message: '请求格式错误',
        en: 'body is not JSON',
        detail: (error as Error).message,
      });
    }
    if (typeof plain !== 'object' || plain === null || Array.isArray(plain))
      return cardAnswer(res, 400, {
        code: 'E100',
        message: '请求格式错误',
        en: 'body is not a JSON object',
        detail: '',
      });
    const fields = plain as Record<string, unknown>;
    for (const name of ['merchantId', 'merchantUserId', 'powerCardId', 'channel', 'closeSerialNo']) {
      if (typeof fields[name] !== 'string' || fields[name] === '')
        return cardAnswer(res, cardStatus(400), {
          code: 'E102',
          message: '参数错误',
          en: `${name} is a required non-empty string`,
          detail: name,
        });
    }
    const merchantId = String(fields.merchantId);
    const powerCardId = String(fields.powerCardId);
    const closeSerialNo = String(fields.closeSerialNo);
    if (merchantId !== String(options.userId))
      return cardAnswer(res, cardStatus(404), {
        code: 'E200',
        message: '商户不存在',
        en: 'merchant not found',
        detail: merchantId,
      });
    if (usedSerials.has(closeSerialNo))
      return cardAnswer(res, cardStatus(409), {
        code: 'E301',
        message: '流水号重复',
        en: 'closeSerialNo already used',
        detail: closeSerialNo,
      });
    if (closedCards.has(powerCardId))
      return cardAnswer(res, cardStatus(409), {
        code: 'E302',
        message: '卡已关闭',
        en: 'card already closed',
        detail: powerCardId,
      });
    usedSerials.add(closeSerialNo);
    closedCards.add(powerCardId);
    cardAnswer(res, 200, undefined, `biz-${randomUUID()}`);
  };

  // --- control API (the documented routes only) -------------------------------------------------

  const control = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => {
    if (req.headers['x-control-token'] !== options.controlToken) {
      req.resume();
      return sendJson(res, 401, { error: 'bad or missing X-Control-Token' });
    }
    // Route first: an unknown route is 404 whatever its body.
    const deliveries = req.method === 'GET' && path === '/deliveries';
    const match = /^\/merchants\/([^/]+)\/(energy|callback-url|callbacks)$/.exec(path);
    const route = match ? `${req.method} ${match[2]}` : '';
    if (!deliveries && !['PUT energy', 'PUT callback-url', 'POST callbacks'].includes(route)) {
      req.resume();
      return sendJson(res, 404, { error: 'no such control route' });
    }
    if (match && match[1] !== String(options.userId)) {
      req.resume();
      return sendJson(res, 404, { error: `no merchant ${match[1]}` });
    }
    const body = await readBody(req);
    if (body === 'too-large') return sendJson(res, 413, { error: 'too large' });
    let input: Record<string, unknown> = {};
    if (body.length > 0) {
      try {
        const parsed = parseExact(body.toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        input = parsed as Record<string, unknown>;
      } catch (error) {
        return sendJson(res, 400, { error: `body is not a JSON object: ${(error as Error).message}` });
      }
    }
    if (deliveries) {
      const trackingId = query.get('trackingId') ?? '';
      return sendJson(res, 200, { attempts: attempts.get(trackingId) ?? [] });
    }
    if (route === 'PUT energy') {
      const balance = numberText(input.balance);
      const cost = numberText(input.costPerTx);
      if (!balance || !cost || !/^\d+$/.test(balance) || !/^\d+$/.test(cost) || BigInt(cost) === 0n)
        return sendJson(res, 400, { error: 'balance and costPerTx are whole numbers, costPerTx > 0' });
      energy.balance = BigInt(balance);
      energy.costPerTx = BigInt(cost);
      return sendJson(res, 200, { balance: new LosslessNumber(balance), costPerTx: new LosslessNumber(cost) });
    }
    if (route === 'PUT callback-url') {
      if (typeof input.url !== 'string' || !/^https?:\/\//.test(input.url))
        return sendJson(res, 400, { error: 'url is an http(s) URL' });
      callbackUrl = input.url;
      return sendJson(res, 200, { url: callbackUrl });
    }
    if (route === 'POST callbacks') {
      const type = numberText(input.type);
      if (!type || !/^[1-7]$/.test(type)) return sendJson(res, 400, { error: 'type is 1..7' });
      const fields = input.fields ?? {};
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
        return sendJson(res, 400, { error: 'fields is an object' });
      const copies = input.deliveries === undefined ? 1 : Number(numberText(input.deliveries));
      if (!Number.isInteger(copies) || copies < 1 || copies > 100)
        return sendJson(res, 400, { error: 'deliveries is 1..100' });
      const delayMs = input.delayMs === undefined ? 0 : Number(numberText(input.delayMs));
      if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > 60_000)
        return sendJson(res, 400, { error: 'delayMs is 0..60000' });
      let delays = defaultRetries;
      if (input.retryDelaysMs !== undefined) {
        if (!Array.isArray(input.retryDelaysMs) || input.retryDelaysMs.length > 20)
          return sendJson(res, 400, { error: 'retryDelaysMs is a list of at most 20 waits' });
        delays = input.retryDelaysMs.map((wait) => Number(numberText(wait)));
        if (delays.some((wait) => !Number.isInteger(wait) || wait < 0 || wait > 120_000))
          return sendJson(res, 400, { error: 'each wait is 0..120000 ms' });
      }
      const trackingId = emit(
        Number(type),
        fields as Record<string, unknown>,
        copies,
        input.concurrent === true,
        delayMs,
        delays,
      );
      // The control API fixes the answer's body, not its status: this service says the event is queued.
      return sendJson(res, options.controlAccepted ? 202 : 200, { trackingId });
    }
    return sendJson(res, 404, { error: 'no such control route' });
  };

  // --- routing ---------------------------------------------------------------------------------

  const notFound = (res: ServerResponse) => sendJson(res, 404, { code: 'NOT FOUND', message: 'not found' });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double.invalid');
    const path = url.pathname;
    const handle = async () => {
      if (path.startsWith(`${BASE}/__control/`))
        return control(req, res, path.slice(`${BASE}/__control`.length), url.searchParams);
      if (req.method === 'POST' && path === `${BASE}/api/v1/api/order/getEnergyMaxCount`) return energyQuery(req, res);
      if (req.method === 'POST' && path === `${BASE}/api/v1/api/order/withdrawWithoutVerify`)
        return orderSubmission(req, res);
      if (req.method === 'POST' && path === `${CARD_BASE}/card/close`) return cardClose(req, res);
      req.resume();
      return notFound(res);
    };
    handle().catch(() => {
      if (!res.headersSent) sendJson(res, 500, { code: 'INTERNAL', message: 'internal error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}${BASE}`,
    cardBaseUrl: `${origin}${CARD_BASE}`,
    completeWithdrawal,
    close: async () => {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
