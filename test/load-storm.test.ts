import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEvents, STORM_TYPES } from '../src/load/events.js';
import { planDeliveries, readProbeUrl, runStorm } from '../src/load/storm.js';
import { offenderLines, summaryLine } from '../src/load/summary.js';
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

const SUMMARY = /^load: (\d+) events, (\d+) duplicate deliveries, processed exactly once: (yes|no), \d+ events\/s, p50 [\d.]+ ms, p99 [\d.]+ ms$/;

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
    expect(plan.filter((item) => !item.duplicate).map((item) => item.event.index)).toEqual(events.map((event) => event.index));
    const racing = plan.slice(0, -15).filter((item, i) => item.duplicate && plan[i - 1]?.event.index === item.event.index);
    expect(racing.length).toBe(15);
    expect(plan.slice(-15).every((item) => item.duplicate)).toBe(true);
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
          probe: () => readProbeUrl(receiver.probeUrl),
          ...(fault === 'lost-on-restart' ? { onDelivery: async (done: number) => (done === 200 ? receiver.restart() : undefined) } : {}),
        });
        const line = summaryLine(result);
        expect(line).toMatch(SUMMARY);
        expect(line).toContain('processed exactly once: no');
        expect(result.offenders.length).toBeGreaterThan(0);
        expect(result.offenders.every((offender) => offender.processed > 1)).toBe(true);
        expect(offenderLines(result)[0]).toMatch(/^ {2}processed [2-9] times: type [13], trackingId load-[0-9a-f-]+, key (deposit|withdrawal):/);
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
        probe: () => readProbeUrl(merchant.probeUrl),
      });
      expect(summaryLine(result)).toMatch(SUMMARY);
      expect(result.offenders).toEqual([]);
      expect(result).toMatchObject({ events: 300, duplicateDeliveries: 150, exactlyOnce: true, acknowledged: 300, unacknowledgedDeliveries: 0 });
      expect(result.histogram.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(result.attempts);
    } finally {
      await merchant.close();
      if (typeof merchant.store !== 'string') await merchant.store.close();
    }
  });
});
