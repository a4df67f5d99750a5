/**
 * Figures of the reference merchant receiver: callbacks per second for unique events and for
 * duplicate deliveries of one event, with the SQLite store (synchronous=full, the default, and
 * synchronous=normal) next to the in-memory store in the same run. Two paths: the transport-free
 * receiver core (decrypt, validate, claim, complete) called in process, and real HTTP on loopback
 * driven by autocannon. 1024-bit key, default profile. Every run also checks the result: unique
 * events processed exactly once each, duplicates never.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { LosslessNumber, stringifyExact } from '../src/core/exact-json.js';
import { sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { createCallbackReceiver } from '../src/merchant/callback-handler.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import { openSqliteStore } from '../src/merchant/sqlite-store.js';
import type { IdempotencyStore } from '../src/merchant/store.js';
import { writeFileSync } from 'node:fs';
import { startPostgres } from '../test/support/postgres.js';
import { cpuRatioLine, STORM_CONCURRENCY, STORM_EVENTS, stormOn, type StormFigures } from './storm.js';

const IN_PROCESS = 3000;
const OVER_HTTP = 6000;
const CONNECTIONS = 16;
const API_KEY = 'bench-key';

type StoreKind = { name: string; open: () => IdempotencyStore };

function withdrawal(i: number): string {
  return stringifyExact({
    type: 3,
    requestUUID: randomUUID(),
    trackingId: `wd-${i}`,
    tenantUserId: 'u-20931',
    business: 0,
    txid: `${i.toString(16).padStart(8, '0')}${'c'.repeat(56)}`,
    callBackId: `cb-${i}`,
    chain: 'TRON',
    symbol: 'USDT',
    toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: new LosslessNumber('12345678901234567890.123'),
  });
}

async function inProcess(
  kind: StoreKind,
  privateKey: RsaPrivateKey,
  unique: string[],
  duplicate: string,
): Promise<{ unique: number; duplicate: number }> {
  const store = kind.open();
  let processed = 0;
  const receiver = createCallbackReceiver({
    apiKeys: [API_KEY],
    publicKey: privateKey.publicKey,
    store,
    process: () => void processed++,
  });
  const headers = { 'x-api-key': API_KEY };
  const rate = async (bodies: string[]) => {
    const start = performance.now();
    for (const body of bodies) {
      const answer = await receiver.handle({ headers, body: Buffer.from(body) });
      if (answer.body.errCode !== 0) throw new Error(`${kind.name}: ${answer.body.message}`);
    }
    return bodies.length / ((performance.now() - start) / 1000);
  };
  const uniqueRate = await rate(unique);
  const duplicateRate = await rate(Array(IN_PROCESS).fill(duplicate));
  // The first duplicate delivery is the event's first delivery: it is processed, the rest are not.
  if (processed !== unique.length + 1)
    throw new Error(`${kind.name}: processed ${processed} events, expected ${unique.length + 1}`);
  await store.close();
  return { unique: uniqueRate, duplicate: duplicateRate };
}

async function overHttp(
  kind: StoreKind,
  privateKey: RsaPrivateKey,
  unique: string[],
  duplicate: string,
): Promise<{ unique: number; duplicate: number }> {
  let processed = 0;
  const server = await startMerchantServer({
    apiKeys: [API_KEY],
    publicKey: privateKey.publicKey,
    store: kind.open(),
    process: () => void processed++,
  });
  const run = async (bodies: () => string) => {
    const start = performance.now();
    const result = await autocannon({
      url: server.callbackUrl,
      connections: CONNECTIONS,
      amount: OVER_HTTP,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': API_KEY },
          setupRequest: (request) => ({ ...request, body: bodies() }),
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${kind.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return result['2xx'] / ((performance.now() - start) / 1000);
  };
  let next = 0;
  const uniqueRate = await run(() => unique[next++]!);
  const duplicateRate = await run(() => duplicate);
  if (processed !== unique.length + 1)
    throw new Error(`${kind.name}: processed ${processed} events over HTTP, expected ${unique.length + 1}`);
  await server.close();
  await server.store.close();
  return { unique: uniqueRate, duplicate: duplicateRate };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wc-merchant-bench-'));
  const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
  let files = 0;
  const kinds: StoreKind[] = [
    { name: 'in-memory', open: () => new MemoryIdempotencyStore() },
    { name: 'SQLite synchronous=full (default)', open: () => openSqliteStore(join(dir, `bench-${files++}.sqlite`)) },
    {
      name: 'SQLite synchronous=normal',
      open: () => openSqliteStore(join(dir, `bench-${files++}.sqlite`), { synchronous: 'normal' }),
    },
  ];
  const seal = (count: number, offset: number) =>
    Array.from({ length: count }, (_, i) => sealJson(withdrawal(offset + i), 'callback', privateKey));
  const duplicate = seal(1, 0)[0]!;
  try {
    console.log(
      `receiver core in process: ${IN_PROCESS} unique events, then ${IN_PROCESS} deliveries of one processed event (1024-bit key, pkcs1)`,
    );
    const core: Record<string, { unique: number; duplicate: number }> = {};
    for (const kind of kinds) {
      core[kind.name] = await inProcess(kind, privateKey, seal(IN_PROCESS, 1_000_000), duplicate);
    }
    report(core);
    console.log(
      `HTTP on loopback (autocannon, ${CONNECTIONS} connections, same process): ${OVER_HTTP} unique events, then ${OVER_HTTP} duplicate deliveries`,
    );
    const http: Record<string, { unique: number; duplicate: number }> = {};
    for (const kind of kinds) {
      http[kind.name] = await overHttp(kind, privateKey, seal(OVER_HTTP, 2_000_000), duplicate);
    }
    report(http);
    await underStorm(dir, privateKey);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(rates: Record<string, { unique: number; duplicate: number }>): void {
  const memory = rates['in-memory']!;
  for (const [name, rate] of Object.entries(rates)) {
    console.log(
      `  ${name.padEnd(36)} unique=${rate.unique.toFixed(0).padStart(6)}/s (${(rate.unique / memory.unique).toFixed(2)}x memory)` +
        `  duplicate=${rate.duplicate.toFixed(0).padStart(6)}/s (${(rate.duplicate / memory.duplicate).toFixed(2)}x memory)`,
    );
  }
}

/**
 * The reference merchant under `load merchant` on loopback: separate merchant processes (the
 * driver is this process), memory, SQLite, PostgreSQL with one and with three instances, all in
 * this run; CPU per event of the merchant processes; and the driver alone against an ack-only
 * receiver, to show it is not the bottleneck.
 */
async function underStorm(dir: string, privateKey: RsaPrivateKey): Promise<void> {
  const keyFile = join(dir, 'public.pem');
  writeFileSync(keyFile, privateKey.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString());
  // fsync on, like SQLite's synchronous=full: a done mark is on disk before it is acknowledged.
  const postgres = await startPostgres({ durable: true, statementCounts: true });
  const storm = (name: string, stores: string[]) => stormOn(name, stores, keyFile, privateKey);
  try {
    console.log(
      `under load merchant (${STORM_EVENTS} events, 30% duplicates, ${STORM_CONCURRENCY} in flight, merchant in separate processes):`,
    );
    const results: Record<string, StormFigures> = {};
    results.memory = await storm('memory', ['memory']);
    results.SQLite = await storm('SQLite', [join(dir, 'storm.sqlite')]);
    results['PostgreSQL, 1 instance'] = await storm('PostgreSQL 1', [postgres.url]);
    // A fresh start for the three-instance run: the same table, emptied.
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    await client.query('TRUNCATE wallet_processed_events');
    await client.end();
    results['PostgreSQL, 3 instances'] = await storm('PostgreSQL 3', [postgres.url, postgres.url, postgres.url]);
    const ceiling = await storm('driver ceiling (ack-only)', ['ack-only']);
    const memory = results.memory!;
    for (const [name, r] of Object.entries(results)) {
      console.log(
        `  ${name.padEnd(26)} ${r.eventsPerSecond.toFixed(0).padStart(5)} events/s (${(r.eventsPerSecond / memory.eventsPerSecond).toFixed(2)}x memory)  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms  merchant CPU ${r.cpuMsPerEvent.toFixed(2)} ms/event  retries ${r.retries}`,
      );
    }
    const one = results['PostgreSQL, 1 instance']!;
    const three = results['PostgreSQL, 3 instances']!;
    const best = Math.max(...Object.values(results).map((r) => r.eventsPerSecond));
    console.log(
      `  SQLite ÷ memory: ${(results.SQLite!.eventsPerSecond / memory.eventsPerSecond).toFixed(2)}x (goal >= 0.5); PostgreSQL 3 ÷ 1 instance: ${(three.eventsPerSecond / one.eventsPerSecond).toFixed(2)}x (goal >= 1.5)`,
    );
    console.log(
      `${cpuRatioLine(one, three)}; one cold run each; the goal (<= 1.2x at the same load per instance) is npm run bench postgres-instances`,
    );
    console.log(
      `  driver alone (ack-only receiver): ${ceiling.eventsPerSecond.toFixed(0)} events/s = ${(ceiling.eventsPerSecond / best).toFixed(2)}x the fastest merchant (goal >= 2)`,
    );
  } finally {
    await postgres.stop();
  }
}
