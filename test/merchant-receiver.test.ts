import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sealBytes } from '../src/crypto/codec.js';
import type { CallbackEvent, ProcessCallback } from '../src/merchant/callback-handler.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import { openSqliteStore } from '../src/merchant/sqlite-store.js';
import type { IdempotencyStore } from '../src/merchant/store.js';
import {
  deliver,
  deposit,
  EXACT_AMOUNT,
  makeKeyPair,
  probe,
  redelivery,
  seal,
  trickyPayload,
  withdrawal,
} from './support/merchant.js';

const API_KEY = 'mk-7f3a9c01';
const keys = makeKeyPair();
const otherKeys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-merchant-'));
let counter = 0;

const STORES: Array<[string, () => IdempotencyStore]> = [
  ['in-memory store', () => new MemoryIdempotencyStore()],
  ['SQLite store', () => openSqliteStore(join(dir, `store-${counter++}.sqlite`))],
];

const running: MerchantServer[] = [];
afterEach(async () => {
  await Promise.all(
    running.splice(0).map(async (server) => {
      await server.close();
      await server.store.close();
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A running merchant with a recording `process`. */
async function merchant(
  store: IdempotencyStore | string,
  process: ProcessCallback = () => undefined,
  extra: { apiKeys?: Parameters<typeof startMerchantServer>[0]['apiKeys'] } = {},
) {
  const events: CallbackEvent[] = [];
  const lines: string[] = [];
  const server = await startMerchantServer({
    log: (line) => lines.push(line),
    apiKeys: extra.apiKeys ?? [API_KEY],
    publicKey: keys.publicKey,
    store,
    bodyLimit: 4096,
    process: async (event) => {
      events.push(event);
      await process(event);
    },
  });
  running.push(server);
  return {
    server,
    events,
    lines,
    send: (body: string | Buffer, apiKey: string | null = API_KEY) =>
      deliver(server.callbackUrl, body, { apiKey: apiKey ?? undefined }),
  };
}

const OK = { errCode: 0, message: '' };

describe.each(STORES)('reference merchant receiver with the %s', (_name, makeStore) => {
  it('processes a callback whose Base64 holds +, / and =, answers errCode 0, and the probe shows it byte for byte', async () => {
    const { send, events, server } = await merchant(makeStore());
    const { payload, body } = trickyPayload((trackingId) => withdrawal({ trackingId }), keys.privateKey);
    expect(body).toMatch(/\+/);
    expect(body).toMatch(/\//);
    expect(body).toMatch(/=$/);
    const answer = await send(body);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(OK);
    expect(events).toHaveLength(1);
    expect(events[0]!.key).toBe(`withdrawal:${String(payload.txid)}`);
    const shown = await probe(server.probeUrl);
    expect(shown.count).toBe(1);
    expect(shown.text).toBe(`{"processed":[${events[0]!.text}]}`);
    expect(shown.text).toContain(`"amount":${EXACT_AMOUNT}`);
  });

  it('processes 100 concurrent identical deliveries once and answers every one errCode 0 (CB-ONCE, CB-DUP-ACK)', async () => {
    const { send, events, server, lines } = await merchant(makeStore(), () => sleep(30));
    const event = deposit();
    const bodies = Array.from({ length: 100 }, () => seal(redelivery(event), keys.privateKey));
    const answers = await Promise.all(bodies.map((body) => send(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
    expect(answers.map((a) => a.json)).toEqual(Array(100).fill(OK));
    expect(events).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('duplicate '))).toHaveLength(99);
    expect((await probe(server.probeUrl)).count).toBe(1);
  });

  it('answers a non-zero errCode when processing throws, processes the retry once, and never again after that (CB-ERRCODE)', async () => {
    let calls = 0;
    const { send, events, server } = await merchant(makeStore(), () => {
      if (++calls === 1) throw new Error('ledger unavailable');
    });
    const event = withdrawal();
    const first = await send(seal(event, keys.privateKey));
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ errCode: 500, message: expect.stringContaining('ledger unavailable') });
    expect((await probe(server.probeUrl)).count).toBe(0);
    expect((await send(seal(redelivery(event), keys.privateKey))).json).toEqual(OK);
    for (let i = 0; i < 3; i++) expect((await send(seal(redelivery(event), keys.privateKey))).json).toEqual(OK);
    expect(events).toHaveLength(2);
    expect((await probe(server.probeUrl)).count).toBe(1);
  });

  it('processes wrapped-contract deposit twins (same txid, another toAddress or symbol) as separate events (CB-ID-DEPOSIT)', async () => {
    const { send, events } = await merchant(makeStore());
    const original = deposit();
    const twins = [
      original,
      deposit({ txid: original.txid, toAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' }),
      deposit({ txid: original.txid, symbol: 'USDC' }),
    ];
    for (const twin of twins) expect((await send(seal(twin, keys.privateKey))).json).toEqual(OK);
    expect((await send(seal(redelivery(original), keys.privateKey))).json).toEqual(OK);
    expect(events).toHaveLength(3);
    expect(new Set(events.map((e) => e.key)).size).toBe(3);
  });

  it('keys other events on (type, trackingId, callBackId), never on requestUUID (CB-ID-OTHER, CB-UUID)', async () => {
    const { send, events } = await merchant(makeStore());
    const request = { type: 2, requestUUID: 'r-1', trackingId: 'wrq-1', callBackId: 'cb-1', amount: '5' };
    const address = { type: 4, requestUUID: 'r-2', trackingId: 'adr-1' };
    for (const payload of [
      request,
      redelivery(request),
      { ...request, callBackId: 'cb-2' },
      address,
      redelivery(address),
      { ...address, type: 5 },
    ]) {
      expect((await send(seal(payload, keys.privateKey))).json).toEqual(OK);
    }
    expect(events.map((e) => e.key)).toEqual([
      'event:2:["wrq-1","cb-1"]',
      'event:2:["wrq-1","cb-2"]',
      'event:4:["adr-1",null]',
      'event:5:["adr-1",null]',
    ]);
  });

  const valid = trickyPayload((trackingId) => withdrawal({ trackingId }), keys.privateKey).body;
  const malformed: Array<[string, () => string | Buffer, RegExp]> = [
    ['a form body data=...', () => `data=${encodeURIComponent(valid)}`, /data-prefix/],
    ["'+' turned into spaces", () => valid.replaceAll('+', ' '), /plus-as-space/],
    ['the URL-safe alphabet', () => valid.replaceAll('+', '-').replaceAll('/', '_'), /url-safe-alphabet/],
    ['line breaks every 76 characters', () => valid.replace(/(.{76})/g, '$1\r\n'), /line-breaks/],
    ['a trailing line end', () => `${valid}\n`, /line-breaks/],
    ['an empty body', () => '', /empty/],
    ['a body encrypted with another key pair', () => seal(withdrawal(), otherKeys.privateKey), /wrong-key/],
    ['a truncated ciphertext', () => valid.slice(0, -8), /ciphertext-length|non-canonical|bad-base64-length/],
    [
      'plaintext that is not JSON',
      () => sealBytes(Buffer.from('txid=ab12&amount=1'), 'callback', keys.privateKey),
      /not-json/,
    ],
    ['a payload of type 99', () => seal(withdrawal({ type: 99 }), keys.privateKey), /invalid-payload/],
    ['a deposit without txid', () => seal(deposit({ txid: undefined }), keys.privateKey), /invalid-payload.*txid/],
    ['a JSON array', () => seal('[1,2]', keys.privateKey), /invalid-payload/],
  ];
  it.each(malformed)(
    'refuses %s with a non-zero errCode and a reason, then still processes the next valid callback (CB-NO-FALSE-ACK, CB-AVAILABLE)',
    async (_what, body, reason) => {
      const { send, events } = await merchant(makeStore());
      const answer = await send(body());
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ errCode: 400, message: expect.stringMatching(reason) });
      expect(events).toHaveLength(0);
      expect((await send(seal(withdrawal(), keys.privateKey))).json).toEqual(OK);
      expect(events).toHaveLength(1);
    },
  );

  it('refuses a body over the limit with HTTP 413 and a non-zero errCode, then still processes the next callback', async () => {
    const { send, events } = await merchant(makeStore());
    const answer = await send('A'.repeat(5000));
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ errCode: 413 });
    expect((await send(seal(withdrawal(), keys.privateKey))).json).toEqual(OK);
    expect(events).toHaveLength(1);
  });

  it('answers 401 to a bad, missing or expired key before looking at the body (CB-KEY-FIRST, CB-KEY-401)', async () => {
    const { send, events } = await merchant(makeStore(), undefined, {
      apiKeys: [
        API_KEY,
        { key: 'mk-old', notAfter: '2020-01-01T00:00:00Z' },
        { key: 'mk-future', notBefore: '2999-01-01T00:00:00Z' },
      ],
    });
    const unauthorized = { status: 401, json: { errCode: 401, message: 'unauthorized' } };
    expect(await send('%%% not base64 at all %%%', 'mk-wrong')).toMatchObject(unauthorized);
    expect(await send(seal(withdrawal(), keys.privateKey), null)).toMatchObject(unauthorized);
    expect(await send(seal(withdrawal(), keys.privateKey), 'mk-old')).toMatchObject(unauthorized);
    expect(await send(seal(withdrawal(), keys.privateKey), 'mk-future')).toMatchObject(unauthorized);
    expect(events).toHaveLength(0);
    expect((await send(seal(withdrawal(), keys.privateKey))).json).toEqual(OK);
  });

  it('answers JSON 405 to another method and JSON 404 to another path', async () => {
    const { server } = await merchant(makeStore());
    const get = await fetch(server.callbackUrl);
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ errCode: 405 });
    const other = await fetch(`${server.url}/nope`, { method: 'POST', body: 'x' });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ errCode: 404 });
  });
});

describe('reference merchant receiver across a restart', () => {
  it('does not process a duplicate that arrives after a restart on the same SQLite file', async () => {
    const path = join(dir, 'restart.sqlite');
    const event = deposit();
    const first = await merchant(path);
    expect((await first.send(seal(event, keys.privateKey))).json).toEqual(OK);
    running.splice(running.indexOf(first.server), 1);
    await first.server.close();

    const second = await merchant(path);
    expect((await second.send(seal(redelivery(event), keys.privateKey))).json).toEqual(OK);
    expect(first.events).toHaveLength(1);
    expect(second.events).toHaveLength(0);
    const shown = await probe(second.server.probeUrl);
    expect(shown.count).toBe(1);
    expect(shown.text).toContain(`"requestUUID":"${String(event.requestUUID)}"`);
  });
});

describe('reference merchant receiver and slow senders', () => {
  it('answers HTTP 408 to a sender that never finishes its body, then acknowledges the next callback', async () => {
    const server = await startMerchantServer({
      apiKeys: [API_KEY],
      publicKey: keys.publicKey,
      store: ':memory:',
      requestTimeoutMs: 500,
    });
    running.push(server);
    // Everything the merchant answered before it closed the connection; an unreachable merchant rejects.
    const received = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      let connected = false;
      socket.on('connect', () => (connected = true));
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('error', (error) => !connected && reject(error));
      socket.on('close', () => resolve(text));
      socket.write(`POST /callback HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${API_KEY}\r\nContent-Length: 1000\r\n\r\nAAAA`);
    });
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(await deliver(server.callbackUrl, seal(withdrawal(), keys.privateKey), { apiKey: API_KEY })).toMatchObject({
      status: 200,
      json: OK,
    });
  });
});
