import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertPublishable, markDemoKey } from './demo-key.js';
import { refusal } from '../../test/support/refusal.js';

const PEM = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n';
const MARKER = '# wallet-conformance demo key: published with the docs; never use it for real traffic';
const CONSENT = 'I understand this key is public';
const dir = mkdtempSync(join(tmpdir(), 'wc-demo-key-'));
const keyFile = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('demo keys', () => {
  it('are marked once, in front of the PEM', () => {
    expect(markDemoKey(PEM)).toBe(`${MARKER}\n${PEM}`);
    expect(markDemoKey(markDemoKey(PEM))).toBe(`${MARKER}\n${PEM}`);
  });

  it.each<[string, string]>([
    ['marked', `${MARKER}\n${PEM}`],
    ['marked with CRLF and spaces', `  ${MARKER}  \r\n${PEM}`],
  ])('a %s key may be published', (_what, text) => {
    expect(refusal(() => assertPublishable(keyFile('demo.pem', text), undefined))).toBeUndefined();
  });

  it.each<[string, string]>([
    ['unmarked', PEM],
    ['marked only after its PEM block', `${PEM}${MARKER}\n`],
  ])('an %s key is refused in one line', (_what, text) => {
    const file = keyFile('real.pem', text);
    expect(refusal(() => assertPublishable(file, undefined))).toEqual([
      'not-a-demo-key',
      `--demo-key ${file} is not a demo key (its file has no "wallet-conformance demo key" line): the docs publish its private half. Make one with "keys generate --demo --out DIR", or, if this key may be public, add --publish-private-key "${CONSENT}"`,
    ]);
  });

  it('any key may be published with the exact words, which are checked before the file is read', () => {
    expect(refusal(() => assertPublishable(join(dir, 'not-there.pem'), ` ${CONSENT} `))).toBeUndefined();
    expect(refusal(() => assertPublishable(join(dir, 'not-there.pem'), 'yes'))).toEqual([
      'bad-flag',
      `--publish-private-key takes the words "${CONSENT}", not something else`,
    ]);
  });

  it('a key file that is not there is one line', () => {
    const missing = join(dir, 'missing.pem');
    expect(refusal(() => assertPublishable(missing, undefined))).toEqual([
      'unreadable-file',
      `cannot read demo key ${missing}: no such file`,
    ]);
  });
});
