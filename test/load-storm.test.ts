import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEvents, STORM_TYPES } from '../src/load/events.js';
import { probeEntriesAfter } from '../src/runner/probe-reader.js';
import { planDeliveries, runStorm } from '../src/load/storm.js';
import { offenderLines, summaryLine } from '../src/load/summary.js';
import { openJson } from '../src/crypto/codec.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import { RECEIVER_FAULTS, startFaultyReceiver, type ReceiverFault } from './fixtures/faulty-receivers.js';
import { makeKeyPair } from './support/merchant.js';
import { startPostgres, type PostgresServer } from './support/postgres.js';

const API_KEY = 'load-key';
const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-load-'));
let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SUMMARY =
  /^load: (\d+) events, (\d+) duplicate deliveries, processed exactly once: (yes|no), \d+ events\/s, p50 [\d.]+ ms, p99 [\d.]+ ms$/;

describe('storm plan', () => {
  it('generates distinct events of every type, with wrapped-contract deposit twins that share a txid', () => {
    const events = generateEvents(400, STORM_TYPES);
    expect(new Set(events.map((event) => event.key)).size).toBe(400);
    expect(new Set(events.map((event) => event.type))).toEqual(new Set(STORM_TYPES));
    const deposits = events.filter((event) => event.type === 1);
    const txids = deposits.map((event) => String(event.payload.txid));
    expect(new Set(txids).size).toBeLessThan(deposits.length);
  });

  it('delivers every event once plus the duplicate share, half racing the first delivery and half at the end', () => {
    const events = generateEvents(100, [1, 3]);
    const plan = planDeliveries(events, 0.3);
    expect(plan).toHaveLength(130);
    expect(plan.filter((item) => !item.duplicate).map((item) => item.event.index)).toEqual(
      events.map((event) => event.index),
    );
    const racing = plan
      .slice(0, -15)
      .filter((item, i) => item.duplicate && plan[i - 1]?.event.index === item.event.index);
    expect(racing.length).toBe(15);
    expect(plan.slice(-15).every((item) => item.duplicate)).toBe(true);
  });
});

describe('storm reads each answer as the service does (CB-ERRCODE, U-CB-RESPONSE)', () => {
  /** A receiver answering every delivery with `status` and `body`; it keeps what it was sent. */
  async function answering(status: number, body: string) {
    const seen: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('latin1') });
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it.each<
    [
      string,
      number,
      string,
      { acknowledged: number; ambiguous: number; attempts: number; failures: Record<string, number> },
    ]
  >([
    ['the plain form', 200, '{"errCode":0}', { acknowledged: 1, ambiguous: 0, attempts: 1, failures: {} }],
    [
      'errCode 0 with HTTP 500 (counted, like the emulator)',
      500,
      '{"errCode":0}',
      { acknowledged: 1, ambiguous: 1, attempts: 1, failures: {} },
    ],
    ['0 written 0.0 (counted)', 200, '{"errCode":0.0}', { acknowledged: 1, ambiguous: 1, attempts: 1, failures: {} }],
    [
      'errCode the string "0" (retried)',
      200,
      '{"errCode":"0"}',
      { acknowledged: 0, ambiguous: 0, attempts: 2, failures: { 'errCode "0"': 2 } },
    ],
    [
      'code instead of errCode (retried)',
      200,
      '{"code":0}',
      { acknowledged: 0, ambiguous: 0, attempts: 2, failures: { 'errCode null': 2 } },
    ],
    [
      'a text body (retried)',
      200,
      'success',
      { acknowledged: 0, ambiguous: 0, attempts: 2, failures: { 'answer not JSON': 2 } },
    ],
    [
      'errCode 1 with HTTP 503 (retried)',
      503,
      '{"errCode":1}',
      { acknowledged: 0, ambiguous: 0, attempts: 2, failures: { 'HTTP 503': 2 } },
    ],
  ])('%s', async (_name, status, body, expected) => {
    const receiver = await answering(status, body);
    try {
      const result = await runStorm({
        callbackUrls: [receiver.url],
        apiKey: API_KEY,
        key: keys.privateKey,
        events: 1,
        duplicates: 0,
        concurrency: 1,
        maxAttempts: 2,
        durationS: 30,
      });
      expect({
        acknowledged: result.acknowledged,
        ambiguous: result.ambiguousAcknowledgements,
        attempts: result.attempts,
        failures: result.failures,
      }).toEqual(expected);
      expect(receiver.seen).toHaveLength(expected.attempts);
      // Each attempt as the service sends it: the form Content-Type, the key, the raw Base64 body, a fresh requestUUID.
      const uuids = receiver.seen.map((delivery) => {
        expect(delivery.headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(delivery.headers['x-api-key']).toBe(API_KEY);
        return String(
          (openJson(delivery.body, 'callback', keys.publicKey).value as Record<string, unknown>).requestUUID,
        );
      });
      expect(new Set(uuids).size).toBe(uuids.length);
    } finally {
      await receiver.close();
    }
  });
});

describe('storm against faulty receivers', () => {
  for (const fault of Object.keys(RECEIVER_FAULTS) as ReceiverFault[]) {
    it(`says "processed exactly once: no" and names the events for a receiver that ${RECEIVER_FAULTS[fault]}`, async () => {
      const receiver = await startFaultyReceiver(fault, { apiKey: API_KEY, publicKey: keys.publicKey });
      try {
        const result = await runStorm({
          callbackUrls: [receiver.callbackUrl],
          apiKey: API_KEY,
          key: keys.privateKey,
          events: 300,
          duplicates: 0.5,
          concurrency: 16,
          durationS: 60,
          probe: () => probeEntriesAfter({ probeUrl: receiver.probeUrl }, undefined),
          ...(fault === 'lost-on-restart'
            ? { onDelivery: async (done: number) => (done === 200 ? receiver.restart() : undefined) }
            : {}),
        });
        const line = summaryLine(result);
        expect(line).toMatch(SUMMARY);
        expect(line).toContain('processed exactly once: no');
        expect(result.offenders.length).toBeGreaterThan(0);
        expect(result.offenders.every((offender) => offender.processed > 1)).toBe(true);
        expect(offenderLines(result)[0]).toMatch(
          /^ {2}processed [2-9] times: type [13], trackingId load-[0-9a-f-]+, key (deposit|withdrawal):/,
        );
      } finally {
        await receiver.close();
      }
    });
  }
});

describe('storm against the reference merchant', () => {
  const stores: Array<[string, () => string | MemoryIdempotencyStore]> = [
    ['the in-memory store', () => new MemoryIdempotencyStore()],
    ['the SQLite store', () => join(dir, 'storm.sqlite')],
    ['the PostgreSQL store', () => postgres.url],
  ];
  it.each(stores)('says "processed exactly once: yes" on %s, with every event of every type', async (_name, store) => {
    const merchant = await startMerchantServer({ apiKeys: [API_KEY], publicKey: keys.publicKey, store: store() });
    try {
      const result = await runStorm({
        callbackUrls: [merchant.callbackUrl],
        apiKey: API_KEY,
        key: keys.privateKey,
        events: 300,
        duplicates: 0.5,
        concurrency: 16,
        types: STORM_TYPES,
        durationS: 60,
        probe: () => probeEntriesAfter({ probeUrl: merchant.probeUrl }, undefined),
      });
      expect(summaryLine(result)).toMatch(SUMMARY);
      expect(result.offenders).toEqual([]);
      expect(result).toMatchObject({
        events: 300,
        duplicateDeliveries: 150,
        exactlyOnce: true,
        acknowledged: 300,
        unacknowledgedDeliveries: 0,
      });
      expect(result.histogram.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(result.attempts);
    } finally {
      await merchant.close();
      if (typeof merchant.store !== 'string') await merchant.store.close();
    }
  });
});
