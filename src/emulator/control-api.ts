import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { readBody, sendJson } from '../platform/http-io.js';
import { validateSchema, type SchemaName } from '../core/schemas.js';
import { defaultCallbackPayload, newTrackingId, type CallbackType } from './callback-payloads.js';
import type { EmulatorMerchant } from './config.js';
import type { EmulatorContext } from './emulator-context.js';
import { decimalToBigInt, isWholeDecimal, parseDecimal } from '../service/decimal.js';
import { settleLeaseDebits } from '../service/energy.js';
import { MAX_REQUEST_DEPTH, nestedDeeperThan } from '../service/limits.js';
import { shapeCallbackPayload } from '../service/policies.js';
import { noteWhy } from './envelope.js';

/** Prefix of every control route (docs/service-guide.md, "Control API"). */
export const CONTROL_PREFIX = '/__control';

type Json = Record<string, ExactJson>;

/** A control answer: status and JSON body (exact numbers allowed). */
interface Answer {
  status: number;
  body: unknown;
}

const error = (status: number, message: string): Answer => ({ status, body: { error: message } });

/**
 * Serves the control API under /__control: every call needs X-Control-Token (401 otherwise); JSON
 * in and out, validated with the spec's Control* schemas; errors are `{"error": "..."}`
 * (ControlError) with 400, 401 or 404.
 */
export async function serveControl(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const answer = await route(ctx, req, path, query);
  if (answer.status >= 400) noteWhy(res, (answer.body as { error: string }).error);
  req.resume();
  sendJson(res, answer.status, stringifyExact(answer.body));
}

async function route(
  ctx: EmulatorContext,
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
): Promise<Answer> {
  if (!tokenMatches(req.headers['x-control-token'], ctx.config.control.token))
    return error(401, 'missing or wrong X-Control-Token');
  const method = req.method ?? '';
  if (path === `${CONTROL_PREFIX}/deliveries` && method === 'GET') return deliveries(ctx, query);
  const match = /^\/__control\/merchants\/([^/]+)\/(energy|callback-url|callbacks|cards)$/.exec(path);
  if (!match) return error(404, `no control route ${method} ${path}`);
  const [, idText = '', resource] = match;
  const merchant = /^\d{1,16}$/.test(idText) ? ctx.merchants.get(Number(idText)) : undefined;
  const known = `${method} ${resource}`;
  if (
    !['PUT energy', 'GET energy', 'PUT callback-url', 'GET callback-url', 'POST callbacks', 'POST cards'].includes(
      known,
    )
  )
    return error(404, `no control route ${method} ${path}`);
  if (!merchant) return error(404, `unknown merchant ${decodeSafely(idText)}`);
  if (known === 'GET energy') return { status: 200, body: energyBody(ctx, merchant) };
  // An extension (like GET energy): lets `verify` put the callback URL back after a run.
  if (known === 'GET callback-url')
    return { status: 200, body: { url: ctx.store.callbackUrl(merchant.userId) ?? null } };
  const body = await readJson(ctx, req);
  if ('error' in body) return body.error;
  switch (known) {
    case 'PUT energy':
      return setEnergy(ctx, merchant, body.value);
    case 'PUT callback-url':
      return setCallbackUrl(ctx, merchant, body.value);
    case 'POST callbacks':
      return emitCallback(ctx, merchant, body.value);
    default:
      return createCard(ctx, merchant, body.value);
  }
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function tokenMatches(header: string | string[] | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(header), digest(token));
}

async function readJson(ctx: EmulatorContext, req: IncomingMessage): Promise<{ value: ExactJson } | { error: Answer }> {
  const body = await readBody(req, ctx.config.bodyLimit);
  if (!body.ok)
    return {
      error: error(
        body.reason === 'too-large' ? 413 : 400,
        body.reason === 'too-large' ? `body exceeds ${ctx.config.bodyLimit} bytes` : 'the body was not received',
      ),
    };
  let value: ExactJson;
  try {
    value = parseExactJson(body.body.toString('utf8'));
  } catch (problem) {
    return { error: error(400, `the body is not JSON: ${(problem as Error).message}`) };
  }
  if (nestedDeeperThan(value))
    return { error: error(400, `the JSON is nested deeper than ${MAX_REQUEST_DEPTH} levels`) };
  return { value };
}

function invalid(name: SchemaName, value: ExactJson): Answer | undefined {
  const issues = validateSchema(name, value);
  if (issues.length === 0) return undefined;
  return error(400, `invalid ${name}: ${issues.map((issue) => issue.message).join('; ')}`);
}

/** An exact whole number of a validated integer field (balances beyond 2^53 stay exact). */
function whole(value: ExactJson | undefined): bigint | undefined {
  const text = value instanceof LosslessNumber ? value.value : undefined;
  const decimal = text === undefined ? undefined : parseDecimal(text);
  return decimal && isWholeDecimal(decimal) && !decimal.negative ? decimalToBigInt(decimal) : undefined;
}

function energyBody(ctx: EmulatorContext, merchant: EmulatorMerchant): unknown {
  settleLeaseDebits(ctx.service);
  const energy = ctx.store.energy(merchant.userId)!;
  return {
    balance: new LosslessNumber(energy.balance.toString()),
    costPerTx: new LosslessNumber(energy.costPerTx.toString()),
  };
}

/** PUT energy: ENERGY-FLOOR answers from this balance at once (the live balance). */
function setEnergy(ctx: EmulatorContext, merchant: EmulatorMerchant, value: ExactJson): Answer {
  const problem = invalid('ControlEnergy', value);
  if (problem) return problem;
  const doc = value as Json;
  const balance = whole(doc.balance);
  const costPerTx = whole(doc.costPerTx);
  if (balance === undefined || costPerTx === undefined || costPerTx < 1n)
    return error(400, 'balance must be a whole number from 0 and costPerTx from 1');
  ctx.store.setEnergy(merchant.userId, { balance, costPerTx });
  // A new balance replaces the old one with its pending lease debits (U-STATES, leaseDebit: later).
  const pending = ctx.service.state.pendingDebits;
  pending.splice(0, pending.length, ...pending.filter((debit) => debit.merchant !== BigInt(merchant.userId)));
  return { status: 200, body: energyBody(ctx, merchant) };
}

/** PUT callback-url: later deliveries (and held ones) go there. */
function setCallbackUrl(ctx: EmulatorContext, merchant: EmulatorMerchant, value: ExactJson): Answer {
  const problem = invalid('ControlCallbackUrl', value);
  if (problem) return problem;
  const url = (value as Json).url as string;
  ctx.store.setCallbackUrl(merchant.userId, url);
  ctx.wakeDispatcher();
  return { status: 200, body: { url } };
}

/**
 * POST callbacks: queue one event of `type` (default payload, `fields` override or add), sent
 * `deliveries` times with fresh requestUUIDs and one trackingId, concurrently or one after another,
 * after `delayMs`, retried on `retryDelaysMs` (attempts = its length + 1) or the configured schedule.
 */
function emitCallback(ctx: EmulatorContext, merchant: EmulatorMerchant, value: ExactJson): Answer {
  const problem = invalid('ControlCallbackRequest', value);
  if (problem) return problem;
  const doc = value as Json;
  if (ctx.store.callbackUrl(merchant.userId) === null) {
    return error(
      400,
      `merchant ${merchant.userId} has no callback URL: PUT ${CONTROL_PREFIX}/merchants/${merchant.userId}/callback-url first`,
    );
  }
  const type = Number((doc.type as LosslessNumber).value) as CallbackType;
  const fields = (doc.fields ?? {}) as Json;
  const trackingId =
    typeof fields.trackingId === 'string' && fields.trackingId !== ''
      ? fields.trackingId
      : newTrackingId(type, ctx.random);
  // U-CB-FIELDS (policies callbackAmount, callbackFieldNames): the amount's form and the fields' spelling.
  const payload = shapeCallbackPayload<ExactJson>(
    { ...defaultCallbackPayload(type, trackingId, ctx.random), ...fields, trackingId },
    ctx.service.policies,
    (text) => new LosslessNumber(text),
  );
  const int = (field: ExactJson | undefined, fallback: number) =>
    field instanceof LosslessNumber ? Number(field.value) : fallback;
  const retryDelaysMs = Array.isArray(doc.retryDelaysMs) ? doc.retryDelaysMs.map((item) => int(item, 0)) : undefined;
  const now = ctx.now();
  ctx.store.insertEvent({
    trackingId,
    merchant: merchant.userId,
    type,
    payload: stringifyExact(payload),
    deliveries: int(doc.deliveries, 1),
    concurrent: doc.concurrent === true,
    ...(retryDelaysMs ? { retryDelaysMs } : {}),
    fixedUuid: ctx.random.uuid(),
    createdAt: now,
    dueAt: now + int(doc.delayMs, 0),
  });
  ctx.wakeDispatcher();
  return { status: 200, body: { trackingId } };
}

/** POST cards `{powerCardId, merchantUserId}`: an open card for card close cases (reopens an existing one). */
function createCard(ctx: EmulatorContext, merchant: EmulatorMerchant, value: ExactJson): Answer {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber)
    return error(400, 'expected {"powerCardId": "...", "merchantUserId": "..."}');
  const doc = value as Json;
  const unknown = Object.keys(doc).filter((key) => key !== 'powerCardId' && key !== 'merchantUserId');
  if (unknown.length > 0) return error(400, `unknown field ${unknown[0]} (known: powerCardId, merchantUserId)`);
  for (const field of ['powerCardId', 'merchantUserId'] as const) {
    const text = doc[field];
    if (typeof text !== 'string' || text.trim() === '') return error(400, `${field} must be a non-empty string`);
  }
  ctx.store.openCard(merchant.userId, doc.powerCardId as string, doc.merchantUserId as string);
  return { status: 200, body: { powerCardId: doc.powerCardId, merchantUserId: doc.merchantUserId, status: 'open' } };
}

/** GET deliveries?trackingId=T: every attempt of the event, oldest first (ControlDeliveries). */
function deliveries(ctx: EmulatorContext, query: URLSearchParams): Answer {
  const trackingId = query.get('trackingId');
  if (!trackingId) return error(400, 'the query parameter trackingId is required');
  // An unknown trackingId has no attempts (yet): the spec answers this route with 200, 400 or 401 only.
  return { status: 200, body: { attempts: ctx.store.attempts(trackingId) ?? [] } };
}
