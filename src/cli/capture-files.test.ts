import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CaptureWriter, readCaptureFile } from '../observe/capture.js';
import type { ObservedExchange } from '../observe/exchange.js';
import { replayFiles, RotatingCaptureSink } from './capture-files.js';

/** The n-th file of a rotating capture of `path` (FILE.jsonl → FILE.00000n.jsonl). */
const segmentName = (path: string, n: number) => path.replace(/\.jsonl$/, `.${String(n).padStart(6, '0')}.jsonl`);

const dir = mkdtempSync(join(tmpdir(), 'wc-capture-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exchange(seq: number): ObservedExchange {
  return {
    v: 1,
    seq,
    kind: 'callback',
    direction: 'service→merchant',
    startedAt: 1,
    endedAt: 2,
    request: { method: 'POST', path: '/callback', headers: {}, bodyBase64: Buffer.alloc(300, seq).toString('base64') },
    response: { status: 200, headers: {}, bodyBase64: '' },
  };
}

async function seqsOf(files: string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (const file of files) {
    const seqs: number[] = [];
    for await (const item of readCaptureFile(file)) seqs.push(item.seq);
    out.push(seqs);
  }
  return out;
}

describe('a rotating capture', () => {
  it('starts a new file between two lines past the size, each file a capture of its own, seq going on', async () => {
    const path = join(dir, 'traffic.jsonl');
    const problems: string[] = [];
    const sink = RotatingCaptureSink.open(path, { maxBytes: 1500, onProblem: (line) => problems.push(line) });
    const writer = new CaptureWriter(sink);
    for (let seq = 1; seq <= 7; seq++) writer.write(exchange(seq));
    await writer.close();
    expect(sink.files).toEqual([1, 2, 3, 4].map((i) => segmentName(path, i)));
    expect(sink.files[0]).toBe(join(dir, 'traffic.000001.jsonl'));
    // Each line is about 600 bytes: two fit under 1500.
    expect(await seqsOf(sink.files)).toEqual([[1, 2], [3, 4], [5, 6], [7]]);
    expect(problems).toEqual([]);
    // The glob of the files reads them back in order.
    expect(replayFiles([join(dir, 'traffic.*.jsonl')])).toEqual(sink.files);
  });

  it('starts a new file at the first line after a file has been open --capture-max-age', async () => {
    const path = join(dir, 'aged.jsonl');
    let clock = 0;
    const sink = RotatingCaptureSink.open(path, { maxAgeMs: 60_000, now: () => clock, onProblem: () => undefined });
    const writer = new CaptureWriter(sink);
    writer.write(exchange(1));
    clock = 59_999;
    writer.write(exchange(2));
    clock = 60_000;
    writer.write(exchange(3));
    clock = 200_000;
    writer.write(exchange(4));
    await writer.close();
    expect(await seqsOf(sink.files)).toEqual([[1, 2], [3], [4]]);
  });

  it('keeps the newest --capture-keep files and deletes the older ones', async () => {
    const path = join(dir, 'kept.jsonl');
    const sink = RotatingCaptureSink.open(path, { maxBytes: 700, keep: 2, onProblem: () => undefined });
    const writer = new CaptureWriter(sink);
    for (let seq = 1; seq <= 5; seq++) writer.write(exchange(seq));
    await writer.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sink.files.map((file) => existsSync(file))).toEqual([false, false, false, true, true]);
    expect(await seqsOf(sink.files.slice(3))).toEqual([[4], [5]]);
  });

  it('refuses to begin over an earlier capture', () => {
    const path = join(dir, 'earlier.jsonl');
    writeFileSync(segmentName(path, 1), '');
    expect(() => RotatingCaptureSink.open(path, { maxBytes: 700, onProblem: () => undefined })).toThrow(
      /earlier\.000001\.jsonl exists already/,
    );
    expect(readFileSync(segmentName(path, 1), 'utf8')).toBe('');
  });

  it('says in one line that a file cannot be opened, and goes on with the next name', async () => {
    const path = join(dir, 'blocked.jsonl');
    const problems: string[] = [];
    const sink = RotatingCaptureSink.open(path, {
      maxBytes: 700,
      retryMs: 0,
      onProblem: (line) => problems.push(line),
    });
    // The second file's name is taken: the rotation cannot open it.
    writeFileSync(segmentName(path, 2), 'someone else');
    const writer = new CaptureWriter(sink);
    for (let seq = 1; seq <= 3; seq++) writer.write(exchange(seq));
    await writer.close();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^observe: capture: cannot open .*blocked\.000002\.jsonl: EEXIST; lines are dropped until a new file can be written/,
    );
    expect(readFileSync(segmentName(path, 2), 'utf8')).toBe('someone else');
    expect(await seqsOf([segmentName(path, 1), segmentName(path, 3)])).toEqual([[1], [3]]);
  });
});

describe('--replay files', () => {
  it('keeps files given one by one in their order, expands a glob in numeric order, refuses a glob matching nothing', () => {
    for (const name of ['run.2.jsonl', 'run.10.jsonl', 'run.1.jsonl', 'other.jsonl'])
      writeFileSync(join(dir, name), '');
    expect(replayFiles([join(dir, 'b.jsonl'), join(dir, 'a.jsonl')])).toEqual([
      join(dir, 'b.jsonl'),
      join(dir, 'a.jsonl'),
    ]);
    expect(replayFiles([join(dir, 'run.*.jsonl')])).toEqual(
      ['run.1.jsonl', 'run.2.jsonl', 'run.10.jsonl'].map((name) => join(dir, name)),
    );
    expect(() => replayFiles([join(dir, 'none.*.jsonl')])).toThrow(/^--replay .*none\.\*\.jsonl matches no file$/);
  });
});
