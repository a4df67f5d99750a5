import { linkSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProfile, readUserFile, writeUserFile } from './io.js';
import { refusal } from '../../test/support/refusal.js';

describe("the user's files", () => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-io-'));

  it('are written with their folders, never over an existing one unless asked', () => {
    const path = join(dir, 'a', 'b', 'out.txt');
    writeUserFile(path, 'one');
    expect(refusal(() => writeUserFile(path, 'two'))).toEqual([
      'file-exists',
      `${path} exists already (use --force to overwrite)`,
    ]);
    expect(readFileSync(path, 'utf8')).toBe('one');
    writeUserFile(path, 'three', { overwrite: true });
    expect(readUserFile(path, 'report').toString('utf8')).toBe('three');
  });

  it('an overwrite replaces the file whole (written beside, renamed over): a reader of the old one never sees half of the new', () => {
    const path = join(dir, 'report.json');
    writeUserFile(path, 'old report');
    // A reader that opened the old file holds it as this second name: an in-place rewrite would change it under the reader.
    linkSync(path, join(dir, 'held.json'));
    writeUserFile(path, 'new report', { overwrite: true });
    expect(readFileSync(path, 'utf8')).toBe('new report');
    expect(readFileSync(join(dir, 'held.json'), 'utf8')).toBe('old report');
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('a key file is written with the mode asked for', () => {
    const path = join(dir, 'key.pem');
    writeUserFile(path, 'k', { mode: 0o600 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it.each<[string, (path: string) => string, string]>([
    ['missing', (path) => join(path, 'nope.yaml'), 'no such file'],
    ['a folder', (path) => path, 'is a directory'],
  ])('a %s file is one line saying what it was for', (_what, at, why) => {
    const path = at(dir);
    expect(refusal(() => readUserFile(path, 'profile'))).toEqual([
      'unreadable-file',
      `cannot read profile ${path}: ${why}`,
    ]);
    expect(refusal(() => loadProfile(path))).toEqual(['unreadable-file', `cannot read profile ${path}: ${why}`]);
  });

  it('no --profile is a copy of the default profile', () => {
    const one = loadProfile(undefined);
    const two = loadProfile(undefined);
    expect(one).toEqual(two);
    expect(one).not.toBe(two);
  });
});
