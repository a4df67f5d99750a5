import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ApiKeyIndex } from './api-keys.js';
import { resolveEmulatorConfig } from './config-load.js';
import { describeMerchantKeys } from './key-description.js';

const KEYS_DIR = fileURLToPath(new URL('../../test/vectors/keys/', import.meta.url));
const T = Date.parse('2026-06-01T00:00:00Z');

/** emulator.yaml with one merchant whose main key has `window` and two extra keys. */
const config = (window: Record<string, unknown> = {}) =>
  resolveEmulatorConfig(
    {
      control: { token: 't' },
      merchants: [
        {
          userId: 7,
          apiKey: 'main',
          privateKey: 'rsa1024-private.pem',
          publicKey: 'rsa1024-public.pem',
          ...window,
          apiKeys: [
            { key: 'energy-only', permissions: ['getEnergyMaxCount'] },
            {
              key: 'old',
              permissions: ['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard'],
              notAfter: '2026-01-01T00:00:00Z',
            },
          ],
        },
      ],
    },
    KEYS_DIR,
    'x.yaml',
  );

describe("the emulator's keys over platform/api-keys.ts (ERR-401, ERR-403)", () => {
  const merchant = config().merchants[0]!;
  const index = new ApiKeyIndex([merchant]);

  it.each([
    ['the main key, for anything', 'main', 'closeCard', { ok: true, merchant }],
    ['an extra key, for what it may call', 'energy-only', 'getEnergyMaxCount', { ok: true, merchant }],
    [
      'an extra key, for what it may not call',
      'energy-only',
      'withdrawWithoutVerify',
      { ok: false, status: 403, why: 'X-API-KEY lacks the withdrawWithoutVerify permission', merchant },
    ],
    [
      'an expired key',
      'old',
      'getEnergyMaxCount',
      { ok: false, status: 401, why: 'X-API-KEY expired at 2026-01-01T00:00:00.000Z' },
    ],
    ['an unknown key', 'mian', 'getEnergyMaxCount', { ok: false, status: 401, why: 'unknown X-API-KEY' }],
    [
      'several headers',
      ['main', 'main'],
      'getEnergyMaxCount',
      { ok: false, status: 401, why: 'several X-API-KEY headers' },
    ],
  ] as const)('judges %s', (_label, header, permission, verdict) => {
    expect(index.check(header as string | string[], permission, T)).toEqual(verdict);
  });

  it('is built from the entries a variant shapes (windows or permissions dropped from outside)', () => {
    const open = new ApiKeyIndex(config().merchants, (keys) =>
      keys.map(({ notBefore: _b, notAfter: _a, permissions: _p, ...key }) => key),
    );
    expect(open.check('old', 'getEnergyMaxCount', T)).toMatchObject({ ok: true });
    expect(open.check('energy-only', 'closeCard', T)).toMatchObject({ ok: true });
    expect(open.check('mian', 'closeCard', T)).toMatchObject({ ok: false, status: 401 });
  });
});

describe("the main key's window: apiKeyNotBefore/apiKeyNotAfter, or the older apiKeyValidFrom/apiKeyValidUntil", () => {
  it.each([
    [
      'apiKeyNotBefore/apiKeyNotAfter',
      { apiKeyNotBefore: '2020-01-01T00:00:00Z', apiKeyNotAfter: '2026-05-01T00:00:00Z' },
    ],
    [
      'apiKeyValidFrom/apiKeyValidUntil',
      { apiKeyValidFrom: '2020-01-01T00:00:00Z', apiKeyValidUntil: '2026-05-01T00:00:00Z' },
    ],
    ['one of each', { apiKeyValidFrom: '2020-01-01T00:00:00Z', apiKeyNotAfter: '2026-05-01T00:00:00Z' }],
  ])('reads %s as the same window', (_label, window) => {
    const merchant = config(window).merchants[0]!;
    expect([merchant.apiKeyValidFrom, merchant.apiKeyValidUntil]).toEqual([
      '2020-01-01T00:00:00Z',
      '2026-05-01T00:00:00Z',
    ]);
    expect(new ApiKeyIndex([merchant]).check('main', 'closeCard', T)).toEqual({
      ok: false,
      status: 401,
      why: 'X-API-KEY expired at 2026-05-01T00:00:00.000Z',
    });
    expect(describeMerchantKeys(merchant, T).expiredKey).toBe('old');
  });

  it.each([
    [
      'both names of the first bound',
      { apiKeyNotBefore: '2020-01-01T00:00:00Z', apiKeyValidFrom: '2020-01-01T00:00:00Z' },
      'x.yaml: merchants[0].apiKeyNotBefore: apiKeyValidFrom names the same bound: give one of them',
    ],
    [
      'both names of the last bound',
      { apiKeyNotAfter: '2030-01-01T00:00:00Z', apiKeyValidUntil: '2031-01-01T00:00:00Z' },
      'x.yaml: merchants[0].apiKeyNotAfter: apiKeyValidUntil names the same bound: give one of them',
    ],
    [
      'a bound that is no date-time',
      { apiKeyNotAfter: 'soon' },
      'x.yaml: merchants[0].apiKeyNotAfter: must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not "soon"',
    ],
    [
      'a misspelt name',
      { apiKeyNotAfer: '2030-01-01T00:00:00Z' },
      "x.yaml: merchants[0]: unknown field 'apiKeyNotAfer'",
    ],
  ])('refuses %s', (_label, window, message) => {
    expect(() => config(window)).toThrow(message);
  });
});
