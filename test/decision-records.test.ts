// The decision records of docs/decisions/ stay an index one can cite: each is `NNNN-slug.md`, numbered
// without gaps, with a status and a date under its title, and listed once in docs/decisions/README.md.
// A record's old unnumbered name may stay as a redirect while a file that cannot be edited cites it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const DIR = join(ROOT, 'docs', 'decisions');
const NUMBERED = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
const files = readdirSync(DIR).filter((file) => file.endsWith('.md') && file !== 'README.md');
const records = files.filter((file) => NUMBERED.test(file)).sort();
const read = (file: string) => readFileSync(join(DIR, file), 'utf8');

describe('decision records', () => {
  it('are numbered 0001 upwards without a gap or a repeat', () => {
    expect(records.length).toBeGreaterThan(100);
    expect(records.map((file) => Number(NUMBERED.exec(file)![1]))).toEqual(records.map((_, i) => i + 1));
  });

  it('carry a title, then a status and a date', () => {
    const wrong = records.filter((file) => {
      const [title, blank, status, date] = read(file).split('\n');
      return !(
        /^# \S/.test(title ?? '') &&
        blank === '' &&
        /^Status: (accepted|superseded by \[\d{4}\]\(\d{4}-[a-z0-9-]+\.md\)) {2}$/.test(status ?? '') &&
        /^Date: \d{4}-\d{2}-\d{2}$/.test(date ?? '')
      );
    });
    expect(wrong).toEqual([]);
  });

  it('are each listed once in the index, under their number', () => {
    const index = readFileSync(join(DIR, 'README.md'), 'utf8');
    const listed = [...index.matchAll(/^- (\d{4}) \[[^\n]*?\]\((\d{4}-[a-z0-9-]+\.md)\)/gm)].map((m) => [m[1], m[2]]);
    expect(listed.filter(([number, file]) => !file!.startsWith(`${number}-`))).toEqual([]);
    expect(listed.map(([, file]) => file).sort()).toEqual(records);
  });

  it('leave only redirects under an unnumbered name, each to a record that exists', () => {
    const others = files.filter((file) => !NUMBERED.test(file));
    const wrong = others.filter((file) => {
      const target = /^# .* \(moved\)\n\nThis decision is now \[(\d{4}-[a-z0-9-]+)\]\(\1\.md\)/.exec(read(file));
      return !target || !records.includes(`${target[1]!}.md`);
    });
    expect(wrong).toEqual([]);
  });

  it('are cited by names that exist, wherever a source or a page names one', () => {
    const cited = ['src', 'test', 'bench', 'scripts', 'docs']
      .flatMap((dir) =>
        readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((file) => join(dir, file)),
      )
      .concat(['README.md', 'ARCHITECTURE.md'])
      .filter((file) => /\.(ts|mjs|md|yaml)$/.test(file))
      .flatMap((file) =>
        [...readFileSync(join(ROOT, file), 'utf8').matchAll(/docs\/decisions\/([\w.-]+\.md)/g)].map((m) => ({
          file,
          name: m[1]!,
        })),
      );
    expect(cited.length).toBeGreaterThan(20);
    expect(
      cited.filter(({ name }) => !existsSync(join(DIR, name))).map(({ file, name }) => `${file}: ${name}`),
    ).toEqual([]);
  });
});
