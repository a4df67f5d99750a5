import { ruleSuffix } from '../core/issue-wording.js';
import { validateSchema } from '../core/schemas.js';
import { notStrings, refuse, type CardOutcome, type Plain, type ServiceContext } from './service-context.js';
import { describeRequestIssues } from './request-wording.js';
import type { CardClose, CloseOutcome, MerchantId, ServiceState } from './state.js';

/** The fields of a card close request (CARD-REQ), all non-empty strings. */
const CARD_FIELDS = ['merchantId', 'merchantUserId', 'powerCardId', 'channel', 'closeSerialNo'] as const;

/**
 * closeCard (CARD-*): the request's fields, the merchant named by merchantId (a merchant's userId as
 * text), `forbidden` when an X-API-KEY of another merchant was sent (`keyMerchant`), then the close
 * itself under the policies closeSerialNo (U-CARD-VALUES) and cardRegistry (U-STATES).
 *
 * @example closeCard(ctx, { merchantId: '10086', merchantUserId: 'u-1', powerCardId: 'pc-1', channel: 'APP', closeSerialNo: 'cs-1' })
 */
export function closeCard(ctx: ServiceContext, plain: Plain, keyMerchant?: MerchantId): CardOutcome {
  const issues = validateSchema('CardCloseRequest', plain);
  if (issues.length > 0) {
    const message = describeRequestIssues('closeCard', issues);
    // Every refusal of the request's fields names CARD-REQ, whether or not an issue's own rules did.
    return refuse('badRequest', message + ruleSuffix(message.includes('CARD-REQ') ? [] : ['CARD-REQ']));
  }
  // A number a float cannot hold (1e999) passes a string schema as its text: check the type once more.
  const notText = notStrings(plain, CARD_FIELDS);
  if (notText) return refuse('badRequest', `${notText} [CARD-REQ]`);
  const request = plain as Record<(typeof CARD_FIELDS)[number], string>;
  const empty = CARD_FIELDS.filter((field) => request[field].trim() === '');
  if (empty.length > 0) return refuse('badRequest', `${empty.join(', ')} must not be empty [CARD-REQ]`);
  const merchant = /^(0|[1-9]\d*)$/.test(request.merchantId) ? BigInt(request.merchantId) : undefined;
  if (merchant === undefined || !ctx.state.hasMerchant(merchant))
    return refuse('merchantNotFound', `no merchant ${request.merchantId}`);
  if (keyMerchant !== undefined && keyMerchant !== merchant) {
    return { ...refuse('forbidden', `X-API-KEY of merchant ${keyMerchant} used for merchant ${merchant}`), merchant };
  }
  const bizId = ctx.bizId();
  const { policies } = ctx;
  const outcome = closeInState(ctx.state, {
    merchant,
    powerCardId: request.powerCardId,
    merchantUserId: request.merchantUserId,
    closeSerialNo: request.closeSerialNo,
    bizId,
    // U-CARD-VALUES (policy closeSerialNo) and U-STATES (policy cardRegistry: off closes any card once).
    checkSerial: policies.closeSerialNo === 'unique',
    registry: policies.cardRegistry === 'on',
  });
  switch (outcome) {
    case 'duplicate-serial':
      return {
        ...refuse(
          'duplicateSerialNo',
          `closeSerialNo ${request.closeSerialNo} was used for an earlier close of merchant ${merchant}`,
        ),
        merchant,
      };
    case 'not-found':
      return {
        ...refuse(
          'cardNotFound',
          `no card ${request.powerCardId} of merchant ${merchant} held by ${request.merchantUserId}`,
        ),
        merchant,
      };
    case 'already-closed':
      return { ...refuse('alreadyClosed', `card ${request.powerCardId} is closed already`), merchant };
    case 'closed':
      return { ok: true, merchant, result: { bizId, status: 'CLOSED' } };
  }
}

/**
 * Closes a card in one transaction of the state, in this order of precedence: a reused
 * closeSerialNo first (when `checkSerial`, U-CARD-VALUES), then a card the state does not know
 * (`not-found`, unless `registry` is off: then it is closed once, U-STATES) or held by another
 * merchantUserId (`not-found`), then a card closed already.
 */
function closeInState(state: ServiceState, close: CardClose): CloseOutcome {
  return state.transaction(() => {
    if (close.checkSerial && state.closeSerialUsed(close.merchant, close.closeSerialNo)) return 'duplicate-serial';
    const card = state.card(close.merchant, close.powerCardId, close.merchantUserId);
    if (card || close.registry) {
      if (!card || card.merchantUserId !== close.merchantUserId) return 'not-found';
      if (card.status === 'closed') return 'already-closed';
    }
    const { merchant, powerCardId, merchantUserId, closeSerialNo, bizId } = close;
    state.recordClose({ merchant, powerCardId, merchantUserId, closeSerialNo, bizId });
    return 'closed';
  });
}
