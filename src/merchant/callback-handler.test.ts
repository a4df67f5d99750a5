import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { sealJson } from '../crypto/codec.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import { createCallbackReceiver, type CallbackEvent, type CallbackHandlerOptions } from './callback-handler.js';
import { MemoryIdempotencyStore } from './memory-store.js';
import { openSqliteStore } from './sqlite-store.js';

const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const headers = { 'x-api-key': 'k-1' };
const dir = mkdtempSync(join(tmpdir(), 'wc-receiver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withdrawalText = (requestUUID: string) =>
  `{"type":3,"requestUUID":"${requestUUID}","trackingId":"wd-1","txid":"4e8a","callBackId":"cb-1","chain":"TRON","symbol":"USDT","toAddress":"TQn9","amount":0.10000000000000000001}`;
const body = (requestUUID: string) => Buffer.from(sealJson(withdrawalText(requestUUID), 'callback', privateKey));

function receiver(options: Partial<CallbackHandlerOptions> = {}) {
  const lines: string[] = [];
  const events: CallbackEvent[] = [];
  const core = createCallbackReceiver({
    apiKeys: ['k-1'],
    publicKey: privateKey.publicKey,
    store: new MemoryIdempotencyStore(),
    process: (event) => void events.push(event),
    log: (line) => lines.push(line),
    ...options,
  });
  return { core, lines, events };
}

describe('callback receiver core', () => {
  it('hands process the exact payload, its text, the key and the requestUUID', async () => {
    const { core, events } = receiver();
    expect(await core.handle({ headers, body: body('r-1') })).toEqual({ status: 200, body: { errCode: 0, message: '' }, outcome: 'processed' });
    const [event] = events;
    expect(event).toMatchObject({ type: 3, key: 'withdrawal:4e8a', requestUUID: 'r-1', text: withdrawalText('r-1') });
    expect(String(event!.payload.amount)).toBe('0.10000000000000000001');
  });

  it('logs one line per delivery: processed, duplicate, rejected with its reason, unauthorized without the key', async () => {
    const { core, lines } = receiver();
    await core.handle({ headers, body: body('r-1') });
    await core.handle({ headers, body: body('r-2') });
    await core.handle({ headers, body: Buffer.from(`data=${body('r-3').toString()}`) });
    await core.handle({ headers: { 'X-Api-Key': 'secret-guess' }, body: body('r-4') });
    expect(lines).toEqual([
      'processed withdrawal:4e8a (type 3, requestUUID r-1)',
      'duplicate withdrawal:4e8a (type 3, requestUUID r-2)',
      expect.stringMatching(/^rejected: data-prefix: /),
      'unauthorized (unknown X-API-KEY)',
    ]);
  });

  it('answers a non-zero errCode 409 when a concurrent delivery is still processing after the wait', async () => {
    let finish = () => undefined as void;
    const { core, events } = receiver({ busyWaitMs: 50, process: () => new Promise<void>((resolve) => (finish = resolve)) });
    const first = core.handle({ headers, body: body('r-1') });
    await sleep(10);
    expect(await core.handle({ headers, body: body('r-2') })).toMatchObject({ status: 200, body: { errCode: 409 }, outcome: 'busy' });
    finish();
    expect((await first).body.errCode).toBe(0);
    expect(events).toHaveLength(0);
  });

  it('lets a waiting delivery process the event itself when the one in flight fails', async () => {
    let calls = 0;
    const { core } = receiver({
      process: async () => {
        await sleep(20);
        if (++calls === 1) throw new Error('first attempt fails');
      },
    });
    const answers = await Promise.all([core.handle({ headers, body: body('r-1') }), core.handle({ headers, body: body('r-2') })]);
    expect(answers.map((a) => a.outcome)).toEqual(['failed', 'processed']);
    expect(calls).toBe(2);
  });

  it('waits on another process through the shared SQLite file, then acknowledges the duplicate', async () => {
    const path = join(dir, 'shared.sqlite');
    const a = receiver({ store: openSqliteStore(path), process: () => sleep(100) });
    const b = receiver({ store: openSqliteStore(path) });
    const first = a.core.handle({ headers, body: body('r-1') });
    await sleep(20);
    const second = await b.core.handle({ headers, body: body('r-2') });
    expect(second.outcome).toBe('duplicate');
    expect((await first).outcome).toBe('processed');
    expect(b.events).toHaveLength(0);
  });

  it('turns a store failure into HTTP 500 with a non-zero errCode, never a throw', async () => {
    const store = new MemoryIdempotencyStore();
    await store.close();
    const { core, lines } = receiver({ store });
    expect(await core.handle({ headers, body: body('r-1') })).toMatchObject({ status: 500, body: { errCode: 500 }, outcome: 'error' });
    expect(lines[0]).toMatch(/^error \(the idempotency store is closed\)$/);
  });

  it('refuses at start-up a key that cannot open callbacks, and an empty key list', () => {
    expect(() => receiver({ publicKey: privateKey })).toThrow(/decrypting it needs the public key/);
    expect(() => receiver({ apiKeys: [] })).toThrow(/at least one API key/);
    expect(() => receiver({ apiKeys: [{ key: 'k', notAfter: 'soon' }] })).toThrow(/notAfter is not a date-time/);
  });
});
