import { describe, expect, it } from 'vitest';
import { ApiKeyRing, inKeyWindow, keyInstant, type ApiKeyEntry } from './api-keys.js';

const T = Date.parse('2026-06-01T00:00:00Z');
const entries: ApiKeyEntry<string, 'read' | 'write'>[] = [
  { key: 'main', owner: 'm1' },
  { key: 'reader', permissions: ['read'], owner: 'm1' },
  { key: 'none', permissions: [], owner: 'm2' },
  { key: 'later', notBefore: '2027-01-01T00:00:00Z', owner: 'm2' },
  { key: 'gone', notAfter: new Date('2026-01-01T00:00:00Z'), owner: 'm2' },
  { key: 'edge', notBefore: '2026-06-01T00:00:00Z', notAfter: '2026-06-01T00:00:00Z', owner: 'm3' },
];
const ring = new ApiKeyRing(entries);

describe('ApiKeyRing: one key check for the emulator and the merchant', () => {
  it.each<[string, string | string[] | undefined, 'read' | 'write' | undefined, unknown]>([
    ['a key with every permission', 'main', 'write', { ok: true, owner: 'm1' }],
    ['a key with the permission asked', 'reader', 'read', { ok: true, owner: 'm1' }],
    ['any key in its window when no permission is asked', 'none', undefined, { ok: true, owner: 'm2' }],
    ['a key on both bounds of its window (inclusive)', 'edge', 'read', { ok: true, owner: 'm3' }],
    ['a single header given as a list', ['main'], 'read', { ok: true, owner: 'm1' }],
    ['no header', undefined, 'read', { ok: false, status: 401, why: 'no X-API-KEY header' }],
    ['an empty header', '', 'read', { ok: false, status: 401, why: 'no X-API-KEY header' }],
    ['an empty list of headers', [], 'read', { ok: false, status: 401, why: 'no X-API-KEY header' }],
    [
      'several headers, even of a good key',
      ['main', 'main'],
      'read',
      { ok: false, status: 401, why: 'several X-API-KEY headers' },
    ],
    ['an unknown key', 'mian', 'read', { ok: false, status: 401, why: 'unknown X-API-KEY' }],
    ['a prefix of a key', 'mai', 'read', { ok: false, status: 401, why: 'unknown X-API-KEY' }],
    [
      'a key before its window',
      'later',
      'read',
      { ok: false, status: 401, why: 'X-API-KEY not valid before 2027-01-01T00:00:00.000Z' },
    ],
    [
      'a key after its window',
      'gone',
      'read',
      { ok: false, status: 401, why: 'X-API-KEY expired at 2026-01-01T00:00:00.000Z' },
    ],
    [
      'a key without the permission',
      'reader',
      'write',
      { ok: false, status: 403, why: 'X-API-KEY lacks the write permission', owner: 'm1' },
    ],
    [
      'a key without any permission',
      'none',
      'read',
      { ok: false, status: 403, why: 'X-API-KEY lacks the read permission', owner: 'm2' },
    ],
  ])('judges %s', (_label, header, permission, verdict) => {
    expect(ring.check(header, permission, T)).toEqual(verdict);
  });

  it('judges the window before the permission: an expired key without the permission is a 401', () => {
    const limited = new ApiKeyRing<undefined, 'read'>([
      { key: 'k', permissions: [], notAfter: '2020-01-01T00:00:00Z' },
    ]);
    expect(limited.check('k', 'read', T)).toMatchObject({ status: 401 });
  });

  it('takes the first of two entries of one key', () => {
    expect(
      new ApiKeyRing([
        { key: 'k', owner: 1 },
        { key: 'k', owner: 2 },
      ]).check('k', undefined, T),
    ).toEqual({ ok: true, owner: 1 });
  });

  it.each([
    ['an empty key', [{ key: '' }], 'API key #1 is not a non-empty string'],
    [
      'a bound that is no date-time',
      [{ key: 'a' }, { key: 'b', notAfter: 'soon' }],
      'API key #2 notAfter is not a date-time: "soon" (use ISO 8601, e.g. 2030-01-01T00:00:00Z)',
    ],
    [
      'an invalid Date',
      [{ key: 'a', notBefore: new Date(Number.NaN) }],
      'API key #1 notBefore is not a date-time: "Invalid Date" (use ISO 8601, e.g. 2030-01-01T00:00:00Z)',
    ],
  ])('refuses %s with a ConfigError', (_label, keys, message) => {
    expect(() => new ApiKeyRing(keys)).toThrow(expect.objectContaining({ name: 'ConfigError', message }));
  });
});

describe('window helpers', () => {
  it('reads a bound as ms, its fallback when absent', () => {
    expect([
      keyInstant('2030-01-01T00:00:00Z', 0, 'x'),
      keyInstant(new Date(5), 0, 'x'),
      keyInstant(undefined, -Infinity, 'x'),
    ]).toEqual([1893456000000, 5, -Infinity]);
  });

  it('says whether a key is in its window, bounds inclusive', () => {
    expect([
      inKeyWindow({}, T),
      inKeyWindow({ notBefore: '2026-06-01T00:00:00Z', notAfter: '2026-06-01T00:00:00Z' }, T),
      inKeyWindow({ notAfter: '2026-05-31T23:59:59.999Z' }, T),
      inKeyWindow({ notBefore: '2026-06-01T00:00:00.001Z' }, T),
    ]).toEqual([true, true, false, false]);
  });
});
