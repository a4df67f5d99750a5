import { describe, expect, it } from 'vitest';
import { ConfigReader, describeType, parseConfigYaml, showValue } from './config-reader.js';
import { ConfigError } from './errors.js';

const r = new ConfigReader('x.yaml', 'bad-test-config', (path) => (path.startsWith('/') ? path : `/srv/conf/${path}`));
const YAML = (text: string) => parseConfigYaml(text, 'x.yaml', 'bad-test-config');
/** Reads the field `v` of a one-line YAML document. */
const field = (text: string) => (YAML(text) as Record<string, unknown>).v;

describe('ConfigReader: a document -> its value', () => {
  it.each<[string, (value: unknown) => unknown, string, unknown]>([
    ['a mapping of known fields', (v) => r.mapping(v, 'v', ['a', 'b']), 'v: { a: 1 }', { a: 1 }],
    ['an absent optional mapping', (v) => r.optionalMapping(v, 'v', ['a']), 'v:', {}],
    ['a string', (v) => r.string(v, 'v'), 'v: text', 'text'],
    ['an absent optional string', (v) => r.optionalString(v, 'v'), 'w: 1', undefined],
    ['a secret', (v) => r.secret(v, 'v'), 'v: "12345"', '12345'],
    ['an absent host', (v) => r.host(v, 'v', '127.0.0.1'), 'v:', '127.0.0.1'],
    ['a host', (v) => r.host(v, 'v', '127.0.0.1'), 'v: ::1', '::1'],
    ['an integer', (v) => r.integer(v, 'v', undefined, 0, 10), 'v: 10', 10],
    ['an absent integer with a default', (v) => r.integer(v, 'v', 7, 0, 10), 'v:', 7],
    ['a number', (v) => r.number(v, 'v', 2, 1, 100), 'v: 1.5', 1.5],
    ['an absent number', (v) => r.number(v, 'v', 2, 1, 100), 'w: 1', 2],
    ['a bigint from a YAML integer', (v) => r.bigint(v, 'v', 0n), 'v: 20000000', 20_000_000n],
    [
      'a bigint beyond 2^53 as a digit string',
      (v) => r.bigint(v, 'v', 0n),
      'v: "123456789012345678901234567890"',
      123456789012345678901234567890n,
    ],
    ['an instant, kept as written', (v) => r.instant(v, 'v'), 'v: 2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z'],
    ['an absent instant', (v) => r.instant(v, 'v'), 'v:', undefined],
    [
      'a key window',
      (v) => r.keyWindow(v as Record<string, unknown>, 'v'),
      'v: { notAfter: "2020-01-01T00:00:00Z" }',
      { notAfter: '2020-01-01T00:00:00Z' },
    ],
    ['a relative path, resolved as the caller says', (v) => r.path(v, 'v'), 'v: keys/a.pem', '/srv/conf/keys/a.pem'],
    ['an absolute path', (v) => r.path(v, 'v'), 'v: /etc/a.pem', '/etc/a.pem'],
    ['a throwaway store', (v) => r.path(v, 'v'), 'v: ":memory:"', ':memory:'],
    ['an absent optional path', (v) => r.optionalPath(v, 'v'), 'v:', undefined],
    ['an https URL', (v) => r.url(v, 'v'), 'v: https://m.example/cb', 'https://m.example/cb'],
    [
      'a path as written without a resolver',
      (v) => new ConfigReader('x.yaml', 'bad-test-config').path(v, 'v'),
      'v: keys/a.pem',
      'keys/a.pem',
    ],
    ['a list', (v) => r.array(v, 'v'), 'v: [1, 2]', [1, 2]],
    ['an absent list', (v) => r.array(v, 'v'), 'v:', []],
  ])('%s', (_name, read, text, expected) => {
    const value = (YAML(text) as Record<string, unknown>).v;
    expect(read(value)).toEqual(expected);
  });

  it('reads a Date (a YAML 1.1 timestamp) as its ISO text', () => {
    expect(r.instant(new Date('2030-01-01T00:00:00Z'), 'v')).toBe('2030-01-01T00:00:00.000Z');
  });
});

describe('ConfigReader: a document -> one line naming the file and the field', () => {
  it.each<[string, (value: unknown) => unknown, string, string]>([
    ['not a mapping', (v) => r.mapping(v, 'v', ['a', 'b']), 'v: [1]', 'x.yaml: v: expected a mapping of a, b'],
    [
      'an unknown field',
      (v) => r.mapping(v, 'v', ['a', 'b']),
      'v: { a: 1, c: 2 }',
      "x.yaml: v: unknown field 'c' (known: a, b)",
    ],
    ['the whole document not a mapping', (v) => r.mapping(v, '', ['a']), 'v: 5', 'x.yaml: expected a mapping of a'],
    ['an empty string', (v) => r.string(v, 'v'), 'v: ""', 'x.yaml: v: must be a non-empty string, not ""'],
    ['a number for a string', (v) => r.optionalString(v, 'v'), 'v: 5', 'x.yaml: v: must be a non-empty string, not 5'],
    [
      'a secret of the wrong type, never shown',
      (v) => r.secret(v, 'v'),
      'v: 123456789',
      'x.yaml: v: must be a non-empty string, not a number',
    ],
    ['an empty secret', (v) => r.secret(v, 'v'), 'v: ""', 'x.yaml: v: must be a non-empty string, not an empty string'],
    [
      'a blank host',
      (v) => r.host(v, 'v', '127.0.0.1'),
      'v: " "',
      'x.yaml: v: must be a host name or address (e.g. 127.0.0.1), not " "',
    ],
    ['a required integer missing', (v) => r.integer(v, 'v', undefined, 0, 10), 'v:', 'x.yaml: v: is required'],
    [
      'an integer out of range',
      (v) => r.integer(v, 'v', 0, 0, 65535),
      'v: 70000',
      'x.yaml: v: must be a whole number from 0 to 65535, not 70000',
    ],
    [
      'a fraction for an integer',
      (v) => r.integer(v, 'v', 0, 0, 10),
      'v: 1.5',
      'x.yaml: v: must be a whole number from 0 to 10, not 1.5',
    ],
    [
      'a quoted integer',
      (v) => r.integer(v, 'v', 0, 0, 10),
      'v: "5"',
      'x.yaml: v: must be a whole number from 0 to 10, not "5"',
    ],
    [
      'a number out of range',
      (v) => r.number(v, 'v', 2, 1, 100),
      'v: 0.5',
      'x.yaml: v: must be a number from 1 to 100, not 0.5',
    ],
    [
      'a bigint below its floor',
      (v) => r.bigint(v, 'v', 1n),
      'v: 0',
      'x.yaml: v: must be a whole number from 1 (a quoted digit string for values beyond 2^53), not 0',
    ],
    [
      'an unsafe integer for a bigint',
      (v) => r.bigint(v, 'v', 0n),
      'v: 12345678901234567890',
      'x.yaml: v: must be a whole number from 0 (a quoted digit string for values beyond 2^53), not 12345678901234567000',
    ],
    [
      'an instant that is no date-time',
      (v) => r.instant(v, 'v'),
      'v: soon',
      'x.yaml: v: must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not "soon"',
    ],
    [
      'a key window bound',
      (v) => r.keyWindow(v as Record<string, unknown>, 'apiKey[0]'),
      'v: { notBefore: 5 }',
      'x.yaml: apiKey[0].notBefore: must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not 5',
    ],
    ['a path of the wrong type', (v) => r.path(v, 'v'), 'v: [a]', 'x.yaml: v: must be a file path, not ["a"]'],
    ['a blank path', (v) => r.optionalPath(v, 'v'), 'v: "  "', 'x.yaml: v: must be a file path, not "  "'],
    [
      'a URL of another scheme',
      (v) => r.url(v, 'v'),
      'v: ftp://x/',
      'x.yaml: v: must be an http(s) URL, not "ftp://x/"',
    ],
    ['no URL at all', (v) => r.url(v, 'v'), 'v: not a url', 'x.yaml: v: must be an http(s) URL, not "not a url"'],
    ['a mapping for a list', (v) => r.array(v, 'v'), 'v: { a: 1 }', 'x.yaml: v: must be a list, not {"a":1}'],
    [
      'a long value, cut',
      (v) => r.string(v, 'v'),
      `v: [${'1, '.repeat(40)}1]`,
      `x.yaml: v: must be a non-empty string, not ${`[${'1,'.repeat(40)}1]`.slice(0, 57)}...`,
    ],
  ])('%s', (_name, read, text, message) => {
    expect(() => read(field(text))).toThrow(new ConfigError('bad-test-config', message));
  });

  it('fails with the reason and source it was given', () => {
    const merchant = new ConfigReader('/a/merchant.yaml', 'bad-merchant-config');
    expect(() => merchant.fail('port', 'is 0')).toThrow(
      new ConfigError('bad-merchant-config', '/a/merchant.yaml: port: is 0'),
    );
  });

  it('refuses YAML that does not parse with one line naming the source', () => {
    let thrown: unknown;
    try {
      parseConfigYaml('a: [\n', 'x.yaml', 'bad-test-config');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).reason).toBe('bad-test-config');
    expect((thrown as ConfigError).message).toMatch(/^x\.yaml: not valid YAML: [^\n]+$/);
  });
});

describe('value display', () => {
  it.each<[unknown, string, string]>([
    ['soon', '"soon"', 'a string'],
    [5, '5', 'a number'],
    [10n, '10', 'a bigint'],
    [null, 'null', 'null'],
    [undefined, 'undefined', 'nothing'],
    [[1], '[1]', 'a list'],
    [{ a: 1 }, '{"a":1}', 'a mapping'],
  ])('%s', (value, shown, type) => {
    expect([showValue(value), describeType(value)]).toEqual([shown, type]);
  });
});
