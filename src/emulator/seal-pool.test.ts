import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE, resolveProfile, type CryptoProfile } from '../core/profile.js';
import { openJson, sealBytes, sealJson } from '../crypto/codec.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaKey, type RsaPrivateKey } from '../crypto/keys.js';
import { openRequest, sealResponse } from '../service/native-codec.js';
import { sealCallback } from '../wire/callback-delivery.js';
import { requestCryptoOf, SealerStopped, SealPool, startSealWorker } from './seal-pool.js';
import type { SealWorkerData, SealWorkerRequest } from './seal-worker.js';

const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const otherKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const pools: SealPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function pool(options: ConstructorParameters<typeof SealPool>[0] = {}): SealPool {
  const made = new SealPool(options);
  pools.push(made);
  return made;
}

/** A thread that exits on its first message, as a thread that crashed would. */
const dyingWorker = () =>
  new Worker('require("node:worker_threads").parentPort.on("message", () => process.exit(3));', { eval: true });

describe('the sealing pool (CB-DECRYPT off the event loop)', () => {
  it('seals exactly as sealCallback does, with each merchant its own key', async () => {
    const sealer = pool({ size: 2 });
    const texts = Array.from(
      { length: 12 },
      (_, i) => `{"type":1,"requestUUID":"u-${i}","trackingId":"t-${i}","pad":"${'x'.repeat(200)}"}`,
    );
    const bodies = await Promise.all(
      texts.map((text, i) => sealer.seal(text, i % 2 ? otherKey : privateKey, DEFAULT_PROFILE)),
    );
    // PKCS#1 v1.5 with the private key is deterministic: the same Base64 as on this thread.
    expect(bodies).toEqual(texts.map((text, i) => sealCallback(text, i % 2 ? otherKey : privateKey, DEFAULT_PROFILE)));
    expect(openJson(bodies[3]!, 'callback', otherKey.publicKey).value).toMatchObject({ trackingId: 't-3' });
  });

  it('passes a sealing error on as an error (not a stopped thread), with the message sealCallback gives', async () => {
    const profile = { ...DEFAULT_PROFILE, plaintextBlock: 500 };
    const expected = (() => {
      try {
        sealCallback('{}', privateKey, profile);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    const failure = await pool()
      .seal('{}', privateKey, profile)
      .catch((error: unknown) => error as Error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(SealerStopped);
    expect((failure as Error).message).toBe(expected);
  });

  it('fails the jobs of a thread that dies with SealerStopped and replaces the thread', async () => {
    let started = 0;
    const sealer = pool({ size: 1, startWorker: () => (++started === 1 ? dyingWorker() : startSealWorker()) });
    const lost = await Promise.allSettled([
      sealer.seal('{"a":1}', privateKey, DEFAULT_PROFILE),
      sealer.seal('{"a":2}', privateKey, DEFAULT_PROFILE),
    ]);
    expect(lost.map((result) => result.status === 'rejected' && result.reason instanceof SealerStopped)).toEqual([
      true,
      true,
    ]);
    expect((lost[0] as PromiseRejectedResult).reason.message).toMatch(/^the sealing thread stopped \(exit code 3\)$/);
    expect(sealer.free).toBe(32);
    expect(await sealer.seal('{"a":3}', privateKey, DEFAULT_PROFILE)).toBe(
      sealCallback('{"a":3}', privateKey, DEFAULT_PROFILE),
    );
    expect(started).toBe(2);
  });

  it('has a bounded queue: free counts down with each job and back up as each ends, telling listeners', async () => {
    const sealer = pool({ size: 1 });
    let ended = 0;
    sealer.onFree(() => ended++);
    expect(sealer.free).toBe(32);
    const jobs = Array.from({ length: 5 }, (_, i) => sealer.seal(`{"n":${i}}`, privateKey, DEFAULT_PROFILE));
    expect(sealer.free).toBe(27);
    await Promise.all(jobs);
    expect(sealer.free).toBe(32);
    expect(ended).toBe(5);
  });

  it('fails jobs not answered at close with SealerStopped and takes none after', async () => {
    const sealer = pool({ size: 1 });
    const job = sealer
      .seal(`{"big":"${'y'.repeat(4_000)}"}`, privateKey, DEFAULT_PROFILE)
      .catch((error: unknown) => error);
    await sealer.close();
    expect(await job).toBeInstanceOf(SealerStopped);
    await expect(sealer.seal('{}', privateKey, DEFAULT_PROFILE)).rejects.toBeInstanceOf(SealerStopped);
    expect(sealer.free).toBe(0);
  });
});

describe("the pool's request crypto (an order's RSA work off the event loop)", () => {
  const oaep = resolveProfile({ padding: 'oaep-sha256' });
  const privateRequests = resolveProfile({ request: 'private' });
  // What the main thread gives (src/service/native-codec.ts) is the reference, for every outcome.
  const cases: Array<[string, string, RsaKey, CryptoProfile, ReadonlySet<CryptoFailureReason>]> = [
    [
      'a request sealed for the private key',
      sealJson('{"amount":12.50,"n":"ü"}', 'request', privateKey.publicKey),
      privateKey,
      DEFAULT_PROFILE,
      new Set(),
    ],
    [
      'an OAEP request',
      sealJson('{"a":1}', 'request', privateKey.publicKey, { profile: oaep }),
      privateKey,
      oaep,
      new Set(),
    ],
    [
      'a request sealed with the private half (a profile of request: private)',
      sealJson('{"a":2}', 'request', privateKey, { profile: privateRequests }),
      privateKey.publicKey,
      privateRequests,
      new Set(),
    ],
    ['unpadded Base64, refused', 'abc', privateKey, DEFAULT_PROFILE, new Set()],
    [
      'unpadded Base64, accepted by policy',
      sealJson('{"a":3}', 'request', privateKey.publicKey).replace(/=+$/, ''),
      privateKey,
      DEFAULT_PROFILE,
      new Set(['missing-padding']),
    ],
    ['another key pair', sealJson('{"a":4}', 'request', otherKey.publicKey), privateKey, DEFAULT_PROFILE, new Set()],
    [
      'bytes that are not UTF-8',
      sealBytes(Buffer.from([0x7b, 0xe9, 0x7d]), 'request', privateKey.publicKey),
      privateKey,
      DEFAULT_PROFILE,
      new Set(),
    ],
  ];

  it.each(cases)('opens %s exactly as the main thread does', async (_label, data, key, profile, accept) => {
    const expected = openRequest(data, key, profile, accept);
    expect(await pool().open(data, key, profile, accept)).toEqual(expected);
  });

  it('tells the outcomes apart (the cases above are not all one answer)', () => {
    const kinds = cases.map(([, data, key, profile, accept]) => {
      const outcome = openRequest(data, key, profile, accept);
      return outcome.ok ? 'ok' : outcome.kind;
    });
    expect(new Set(kinds)).toEqual(new Set(['ok', 'base64', 'decrypt', 'text']));
  });

  it('seals a result exactly as the main thread does (PKCS#1 v1.5 with the private key is deterministic)', async () => {
    const json = '{"tenantUserId":20931,"id":"cb-1"}';
    const sealed = await pool({ size: 2 }).sealResponse(json, privateKey, DEFAULT_PROFILE);
    expect(sealed).toBe(sealResponse(json, privateKey, DEFAULT_PROFILE));
    expect(openJson(sealed, 'response', privateKey.publicKey).text).toBe(json);
  });

  it('has room for requests while half the queue is free, so the other half stays for callbacks', async () => {
    const sealer = pool({ size: 1 });
    expect(sealer.roomForRequests).toBe(true);
    const jobs = Array.from({ length: 15 }, (_, i) => sealer.seal(`{"n":${i}}`, privateKey, DEFAULT_PROFILE));
    expect([sealer.free, sealer.roomForRequests]).toEqual([17, true]);
    jobs.push(sealer.seal('{"n":15}', privateKey, DEFAULT_PROFILE));
    expect([sealer.free, sealer.roomForRequests]).toEqual([16, false]);
    await Promise.all(jobs);
    expect(sealer.roomForRequests).toBe(true);
    await sealer.close();
    expect(sealer.roomForRequests).toBe(false);
  });

  it('fails request jobs of a thread that dies with SealerStopped, so the caller can do the work itself', async () => {
    const sealer = pool({ size: 1, startWorker: dyingWorker });
    const data = sealJson('{}', 'request', privateKey.publicKey);
    await expect(sealer.open(data, privateKey, DEFAULT_PROFILE, new Set())).rejects.toBeInstanceOf(SealerStopped);
    await expect(sealer.sealResponse('{}', privateKey, DEFAULT_PROFILE)).rejects.toBeInstanceOf(SealerStopped);
    expect(requestCryptoOf(sealer)).toBe(sealer);
    expect(
      requestCryptoOf({ free: 1, onFree: () => undefined, seal: async () => '', close: async () => undefined }),
    ).toBeUndefined();
  });
});

describe("the pool's spare thread (callback seals on CPU nothing else wants)", () => {
  /** Starts real sealing threads, counting the jobs each kind of thread was sent. */
  function counting(): { sent: { normal: number; spare: number }; startWorker: (data?: SealWorkerData) => Worker } {
    const sent = { normal: 0, spare: 0 };
    return {
      sent,
      startWorker: (data) => {
        const worker = startSealWorker(data);
        const post = worker.postMessage.bind(worker);
        worker.postMessage = (message: SealWorkerRequest) => {
          if (message.kind !== 'key') sent[data?.lowerPriority ? 'spare' : 'normal']++;
          post(message);
        };
        return worker;
      },
    };
  }
  const linux = process.platform === 'linux';
  /** A stand-in spare thread: says it loaded with `lowered`, then exits on its first message (as a crashed thread would). */
  const fakeSpare = (lowered: { tid: number } | { error: string }) =>
    new Worker(
      `const { parentPort } = require("node:worker_threads"); parentPort.postMessage({ ready: true, lowered: ${JSON.stringify(lowered)} }); parentPort.on("message", () => process.exit(3));`,
      { eval: true },
    );
  /** A pool of one thread and a spare, whose spare thread is started by `spare` and its other thread by `normal`. */
  const withSpare = (spare: () => Worker, normal: (data?: SealWorkerData) => Worker = startSealWorker) =>
    pool({ size: 1, spare: true, startWorker: (data) => (data?.lowerPriority ? spare() : normal(data)) });
  /** Overflows a pool of one thread once (33 seals), which starts the spare; resolves once `loaded` holds. */
  async function overflow(sealer: SealPool, loaded: () => boolean): Promise<void> {
    await Promise.allSettled(
      Array.from({ length: 33 }, (_, i) => sealer.seal(`{"first":${i}}`, privateKey, DEFAULT_PROFILE)),
    );
    const end = Date.now() + 10_000;
    while (!loaded()) {
      if (Date.now() > end) throw new Error('gave up waiting for the spare thread');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it.runIf(linux)('runs at nice 19, and its queue adds to the room the dispatcher sees', async () => {
    const sealer = pool({ size: 1, spare: true });
    await sealer.warm();
    // Not started by warm: an emulator that never sees a storm never holds it.
    expect([sealer.free, sealer.spareThreadId]).toEqual([32, undefined]);
    await overflow(sealer, () => sealer.spareThreadId !== undefined);
    const tid = sealer.spareThreadId;
    expect(tid).toBeGreaterThan(0);
    // /proc/<pid>/task/<tid>/stat: the nice value is the 19th field (the 17th after the command's closing parenthesis).
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    expect(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]).toBe('19');
    expect(sealer.free).toBe(64);
  });

  it.runIf(linux)("takes a callback seal only when every other queue is full, and never an order's RSA", async () => {
    const { sent, startWorker } = counting();
    const sealer = pool({ size: 1, spare: true, startWorker });
    await overflow(sealer, () => sealer.spareThreadId !== undefined);
    // The spare was started by the 33rd seal, which went to the normal thread while it loaded.
    expect(sent).toEqual({ normal: 33, spare: 0 });
    sent.normal = 0;
    const texts = Array.from({ length: 40 }, (_, i) => `{"type":1,"n":${i}}`);
    const seals = texts.map((text) => sealer.seal(text, privateKey, DEFAULT_PROFILE));
    expect(sent).toEqual({ normal: 32, spare: 8 });
    // The normal queue is full; an order's work still goes there, never to the spare.
    const data = sealJson('{"a":1}', 'request', privateKey.publicKey);
    const opened = sealer.open(data, privateKey, DEFAULT_PROFILE, new Set());
    const response = sealer.sealResponse('{"b":2}', privateKey, DEFAULT_PROFILE);
    expect(sent).toEqual({ normal: 34, spare: 8 });
    expect(await Promise.all(seals)).toEqual(texts.map((text) => sealCallback(text, privateKey, DEFAULT_PROFILE)));
    expect(await opened).toEqual(openRequest(data, privateKey, DEFAULT_PROFILE, new Set()));
    expect(await response).toBe(sealResponse('{"b":2}', privateKey, DEFAULT_PROFILE));
    expect(sealer.free).toBe(64);
  });

  it("fails the jobs of a spare that dies with SealerStopped, leaves the other threads' count alone, and starts a new spare on the next overflow", async () => {
    let spares = 0;
    // Says it lowered its priority, then dies on its first message.
    const sealer = withSpare(() => {
      spares++;
      return fakeSpare({ tid: 1 });
    });
    await overflow(sealer, () => sealer.free === 64);
    expect(spares).toBe(1);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 36 }, (_, i) => sealer.seal(`{"n":${i}}`, privateKey, DEFAULT_PROFILE)),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(32);
    const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(lost).toHaveLength(4);
    expect(lost.every((outcome) => outcome.reason instanceof SealerStopped)).toBe(true);
    // The spare is gone until the next overflow; the normal thread's queue is whole again.
    expect(sealer.free).toBe(32);
    const again = Array.from({ length: 33 }, (_, i) =>
      sealer.seal(`{"m":${i}}`, privateKey, DEFAULT_PROFILE).catch((error: unknown) => error),
    );
    expect(spares).toBe(2);
    await Promise.all(again);
  });

  it('is not used where it cannot lower its priority: it would take CPU from the event loop', async () => {
    const { sent, startWorker } = counting();
    let refused = 0;
    let stopped = false;
    const sealer = withSpare(() => {
      refused++;
      const worker = fakeSpare({ error: 'EACCES' });
      worker.once('exit', () => (stopped = true));
      return worker;
    }, startWorker);
    await overflow(sealer, () => stopped);
    expect([sealer.free, sealer.spareThreadId, refused]).toEqual([32, undefined, 1]);
    sent.normal = 0;
    const texts = Array.from({ length: 40 }, (_, i) => `{"type":1,"n":${i}}`);
    expect(await Promise.all(texts.map((text) => sealer.seal(text, privateKey, DEFAULT_PROFILE)))).toEqual(
      texts.map((text) => sealCallback(text, privateKey, DEFAULT_PROFILE)),
    );
    // Every seal on the normal thread, and no second attempt at a spare.
    expect([sent.normal, sent.spare, refused]).toEqual([40, 0, 1]);
  });
});
