import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { merchantTarget, testKeys } from '../../test/support/check-context.js';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import { MemoryIdempotencyStore } from '../merchant/memory-store.js';
import { startMerchantServer } from '../merchant/server.js';
import { parseProbeAnswer, probeBaseline, readProbeAfter } from './probe-reader.js';
import type { MerchantTarget } from './types.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function fill(store: MemoryIdempotencyStore, from: number, count: number, size: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const text = `{"trackingId":"t-${i}","pad":"${'y'.repeat(size)}"}`;
    const claim = await store.claim(`k${i}`, text);
    if (claim.state === 'claimed') await store.complete(`k${i}`, claim.token);
  }
}

async function referenceMerchant(store: MemoryIdempotencyStore, token?: string): Promise<MerchantTarget> {
  const merchant = await startMerchantServer({
    apiKeys: ['k'],
    publicKey: testKeys.publicKey,
    store,
    ...(token ? { probe: { token } } : {}),
  });
  closers.push(() => merchant.close());
  return { ...merchantTarget, probeUrl: merchant.probeUrl };
}

/** A user's probe of the old contract: answers its whole list, whatever the query; counts its requests. */
async function oldProbe(
  list: () => string[],
  refuseQuery = false,
): Promise<{ target: MerchantTarget; urls: string[] }> {
  const urls: string[] = [];
  const server: Server = createServer((req, res) => {
    urls.push(req.url ?? '');
    if (refuseQuery && (req.url ?? '').includes('?')) {
      res.writeHead(400).end('unknown parameter');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{"processed":[${list().join(',')}]}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    target: { ...merchantTarget, probeUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/probe` },
    urls,
  };
}

describe('reading the probe page by page', () => {
  it('reads a history of over 1 MiB from the reference merchant in pages, exactly and in order', async () => {
    const store = new MemoryIdempotencyStore();
    await fill(store, 0, 1_500, 1_000);
    const target = await referenceMerchant(store);
    const read = (await readProbeAfter(target, undefined))!;
    expect(read.paged).toBe(true);
    expect(read.entries).toHaveLength(1_500);
    expect(read.entries.reduce((sum, entry) => sum + entry.length, 0)).toBeGreaterThan(1024 * 1024);
    expect(read.entries.map((entry) => (JSON.parse(entry) as { trackingId: string }).trackingId)).toEqual(
      Array.from({ length: 1_500 }, (_, i) => `t-${i}`),
    );
  });

  it('reads from a mark only what came after it: a baseline keeps nothing of the history', async () => {
    const store = new MemoryIdempotencyStore();
    await fill(store, 0, 1_200, 10);
    const target = await referenceMerchant(store);
    const mark = (await probeBaseline(target))!;
    expect(mark.cursor).toBe('1200');
    await fill(store, 1_200, 2, 10);
    const after = (await readProbeAfter(target, mark))!;
    expect(after.entries.map((entry) => (JSON.parse(entry) as { trackingId: string }).trackingId)).toEqual([
      't-1200',
      't-1201',
    ]);
    expect(after.mark.cursor).toBe('1202');
  });

  it('reads a probe that ignores the query (the old contract): its whole answer once, the entries past the mark are new', async () => {
    const list = ['{"a":1}', '{"a":2}'];
    const { target, urls } = await oldProbe(() => list);
    const baseline = (await readProbeAfter(target, undefined, { keep: false }))!;
    expect(baseline).toEqual({ entries: [], mark: { index: 2 }, paged: false });
    list.push('{"a":3}');
    expect((await readProbeAfter(target, baseline.mark))!.entries).toEqual(['{"a":3}']);
    expect(urls).toEqual(['/probe?limit=500', '/probe?limit=500']);
  });

  it('asks a probe that refuses the query the old way, and keeps asking it so', async () => {
    const { target, urls } = await oldProbe(() => ['{"a":1}'], true);
    expect((await readProbeAfter(target, undefined))!.entries).toEqual(['{"a":1}']);
    expect((await readProbeAfter(target, undefined))!.entries).toEqual(['{"a":1}']);
    expect(urls).toEqual(['/probe?limit=500', '/probe', '/probe']);
  });

  it('sends the probe token as a Bearer credential, and says what to give when the probe wants one', async () => {
    const store = new MemoryIdempotencyStore();
    await fill(store, 0, 1, 1);
    const target = await referenceMerchant(store, 'the-probe-token-5678');
    await expect(readProbeAfter(target, undefined)).rejects.toThrow(
      /answered 401: it may need a token; give it with --probe-token or WALLET_PROBE_TOKEN$/,
    );
    await expect(readProbeAfter({ ...target, probeToken: 'wrong-token' }, undefined)).rejects.toThrow(
      /answered 401 to the probe token \(--probe-token or WALLET_PROBE_TOKEN\): is it the one in the merchant's probe.token\?$/,
    );
    expect((await readProbeAfter({ ...target, probeToken: 'the-probe-token-5678' }, undefined))!.entries).toHaveLength(
      1,
    );
  });

  it('refuses a probe whose cursor does not move while it says more follow', async () => {
    const server = createServer((_req, res) =>
      res.writeHead(200).end('{"processed":[{"a":1}],"next":"7","more":true}'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const target = { ...merchantTarget, probeUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/probe` };
    await expect(readProbeAfter(target, undefined)).rejects.toThrow(
      /answered "more" with the same "next" cursor it was asked for/,
    );
  });
});

describe('scanning a probe answer', () => {
  // Strings holding what a naive scan trips on: quotes and backslashes escaped, brackets and commas, astral and combining characters.
  const entries = [
    String.raw`{"t":"a\\"}`,
    String.raw`{"t":"b\\\"],{x"}`,
    '{"t":"租户𐀀é\u0301"}',
    '[1,{"n":2.50}]',
    '"s"',
    '12.340',
    String.raw`{"t":"\\\\"}`,
  ];
  const text = `{"count":7, "processed": [ ${entries.join(' ,\n')} ], "more": false}`;

  it('reads the same from the bytes as from the text, each entry exact, only those from the skip on decoded', () => {
    const bytes = Buffer.from(text, 'utf8');
    for (const answer of [text, bytes]) {
      const all = parseProbeAnswer(answer, 'p');
      expect(all.entries).toEqual(entries.map((entry) => stringifyExact(parseExactJson(entry))));
      expect(all.count).toBe(7);
      expect(all.more).toBe(false);
      const tail = parseProbeAnswer(answer, 'p', 5);
      expect(tail).toEqual({ entries: all.entries.slice(5), count: 7, more: false });
      expect(parseProbeAnswer(answer, 'p', Infinity)).toEqual({ entries: [], count: 7, more: false });
    }
  });

  it('refuses an answer cut inside a string or a list, as text or as bytes', () => {
    for (const cut of [text.slice(0, text.indexOf('租')), text.slice(0, -3)]) {
      expect(() => parseProbeAnswer(cut, 'the probe')).toThrow(/^the probe gave no JSON/);
      expect(() => parseProbeAnswer(Buffer.from(cut, 'utf8'), 'the probe')).toThrow(/^the probe gave no JSON/);
    }
  });
});
