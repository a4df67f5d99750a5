import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import { closeCard } from './card-close.js';
import type { CardOutcome, Plain, ServiceContext } from './service-context.js';
import { MemoryServiceState } from './memory-state.js';
import { DEFAULT_POLICIES, type ServicePolicies } from './policies.js';

const MERCHANT = 10086n;

function setup(policies: Partial<ServicePolicies> = {}, unknownCards: 'open' | 'unknown' = 'unknown') {
  const state = new MemoryServiceState({
    merchants: [
      { userId: MERCHANT, energy: { balance: 0n, costPerTx: 1n } },
      { userId: 7n, energy: { balance: 0n, costPerTx: 1n } },
    ],
    unknownCards,
  });
  let n = 0;
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: () => undefined },
    policies: { ...DEFAULT_POLICIES, ...policies },
    now: () => 0,
    random: { uuid: () => 'u', hex: () => 'h' },
    withdrawalDelayMs: 0,
    bizId: () => `biz-${++n}`,
  };
  state.openCard(MERCHANT, 'pc-1', 'u-1');
  state.openCard(MERCHANT, 'pc-2', 'u-1');
  const close = (fields: Record<string, unknown> = {}, keyMerchant?: bigint) =>
    closeCard(ctx, request(fields), keyMerchant);
  return { ctx, state, close };
}

function request(fields: Record<string, unknown> = {}): Plain {
  const all: Record<string, unknown> = {
    merchantId: '10086',
    merchantUserId: 'u-1',
    powerCardId: 'pc-1',
    channel: 'APP',
    closeSerialNo: 'cs-1',
    ...fields,
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Plain;
}

/** An outcome as one line: `closed biz-1` or `<failure>: <message>`. */
const line = (outcome: CardOutcome) =>
  outcome.ok ? `closed ${outcome.result.bizId}` : `${outcome.failure}: ${outcome.message}`;

describe('closeCard', () => {
  it.each<[string, Record<string, unknown>, string | RegExp]>([
    ['closes a registered open card', {}, 'closed biz-1'],
    ['refuses a missing field, naming it', { channel: undefined }, 'badRequest: channel is required [CARD-REQ]'],
    [
      'refuses missing fields, each once, five at most',
      {
        merchantId: undefined,
        merchantUserId: undefined,
        powerCardId: undefined,
        channel: undefined,
        closeSerialNo: undefined,
      },
      'badRequest: merchantId is required [CARD-REQ]; merchantUserId is required [CARD-REQ]; powerCardId is required [CARD-REQ]; channel is required [CARD-REQ]; closeSerialNo is required [CARD-REQ]',
    ],
    [
      'refuses a field that is a number',
      { channel: new LosslessNumber('1') },
      'badRequest: channel must be string [CARD-REQ]',
    ],
    [
      'refuses a number a float cannot hold',
      { channel: new LosslessNumber('1e999') },
      'badRequest: channel must be string [CARD-REQ]',
    ],
    [
      'refuses blank fields, naming each',
      { channel: ' ', closeSerialNo: '' },
      'badRequest: channel, closeSerialNo must not be empty [CARD-REQ]',
    ],
    ['refuses an unknown merchant', { merchantId: '10087' }, 'merchantNotFound: no merchant 10087'],
    ['refuses a merchantId with a leading zero', { merchantId: '010086' }, 'merchantNotFound: no merchant 010086'],
    ['refuses a merchantId that is no number', { merchantId: 'acme' }, 'merchantNotFound: no merchant acme'],
    [
      'refuses a card never registered',
      { powerCardId: 'pc-9' },
      'cardNotFound: no card pc-9 of merchant 10086 held by u-1',
    ],
    [
      'refuses a card held by another user',
      { merchantUserId: 'u-2' },
      'cardNotFound: no card pc-1 of merchant 10086 held by u-2',
    ],
  ])('%s', (_name, fields, expected) => {
    const outcome = setup().close(fields);
    if (typeof expected === 'string') expect(line(outcome)).toBe(expected);
    else expect(line(outcome)).toMatch(expected);
  });

  it('refuses a second close of a card, and a reused closeSerialNo before that', () => {
    const { close } = setup();
    expect(line(close())).toBe('closed biz-1');
    expect(line(close({ closeSerialNo: 'cs-2' }))).toBe('alreadyClosed: card pc-1 is closed already');
    expect(line(close({ powerCardId: 'pc-2' }))).toBe(
      'duplicateSerialNo: closeSerialNo cs-1 was used for an earlier close of merchant 10086',
    );
  });

  it.each<[string, Partial<ServicePolicies>, 'open' | 'unknown', string[]]>([
    [
      'closeSerialNo ignored: a reused serial closes another card',
      { closeSerialNo: 'ignored' },
      'unknown',
      ['closed biz-1', 'closed biz-2'],
    ],
    [
      'cardRegistry off: a card never seen closes once',
      { cardRegistry: 'off' },
      'unknown',
      ['closed biz-1', 'closed biz-2', 'alreadyClosed: card pc-9 is closed already'],
    ],
    [
      'unknown cards open (MSW): any card of a known merchant closes once',
      {},
      'open',
      ['closed biz-1', 'closed biz-2', 'alreadyClosed: card pc-9 is closed already'],
    ],
  ])('%s', (_name, policies, unknownCards, expected) => {
    const { close } = setup(policies, unknownCards);
    const lines =
      policies.closeSerialNo === 'ignored'
        ? [close(), close({ powerCardId: 'pc-2' })]
        : [
            close(),
            close({ powerCardId: 'pc-9', closeSerialNo: 'cs-2' }),
            close({ powerCardId: 'pc-9', closeSerialNo: 'cs-3' }),
          ];
    expect(lines.map(line)).toEqual(expected);
  });

  it("answers forbidden for another merchant's X-API-KEY, after the merchant is known", () => {
    const { close } = setup();
    expect(close({}, 7n)).toMatchObject({
      ok: false,
      failure: 'forbidden',
      message: 'X-API-KEY of merchant 7 used for merchant 10086',
      merchant: MERCHANT,
    });
    expect(line(close({ merchantId: '99' }, 7n))).toBe('merchantNotFound: no merchant 99');
    expect(line(close({}, MERCHANT))).toBe('closed biz-1');
  });
});
