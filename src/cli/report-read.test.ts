import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readReportDir } from './report-read.js';
import { refusal } from '../../test/support/refusal.js';

const root = mkdtempSync(join(tmpdir(), 'wc-report-read-'));
const shard = (name: string, text?: string) => {
  const dir = join(root, name);
  mkdirSync(dir);
  if (text !== undefined) writeFileSync(join(dir, 'report.json'), text);
  return dir;
};

describe('reading a shard for report merge', () => {
  it('a folder without report.json is one line', () => {
    const dir = shard('empty');
    expect(refusal(() => readReportDir(dir))).toEqual([
      'unreadable-file',
      `cannot read report ${join(dir, 'report.json')}: no such file`,
    ]);
  });

  it('a report.json that is not JSON is one line naming it', () => {
    const dir = shard('garbage', '{"results": [');
    const [reason, message] = refusal(() => readReportDir(dir))!;
    expect(reason).toBe('bad-report');
    expect(message).toMatch(
      new RegExp(`^${join(dir, 'report.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON: [^\\n]+$`),
    );
  });

  it.each<[string, string, string]>([
    ['an array', '[]', '(root) must be object'],
    ['an empty object', '{}', "(root) must have required property 'target'"],
    [
      'a report without a target',
      '{"tool": {"name": "wallet-conformance"}}',
      "(root) must have required property 'target'",
    ],
  ])('%s is not a report: one line with where the schema refused it', (name, text, why) => {
    const dir = shard(name.replace(/ /g, '-'), text);
    expect(refusal(() => readReportDir(dir))).toEqual([
      'bad-report',
      `${join(dir, 'report.json')} is not a wallet-conformance report.json: ${why}`,
    ]);
  });
});
