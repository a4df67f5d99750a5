/**
 * The emulator's order endpoints do their RSA work (the request opened, the result sealed) on the
 * sealing threads when it has them, on the event loop when their queue is full or a thread died,
 * and every answer is the same either way: status, body, failure wording.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CryptoProfile } from '../src/core/profile.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import type { CryptoFailureReason } from '../src/crypto/errors.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { SealerStopped, SealPool, type CallbackSealer } from '../src/emulator/seal-pool.js';
import { startEmulator } from '../src/emulator/server.js';
import type { OpenOutcome } from '../src/service/pipeline.js';

const ORDER = '/api/v1/api/order/withdrawWithoutVerify';
const ENERGY = '/api/v1/api/order/getEnergyMaxCount';

/** A pool that counts the request jobs it took. */
class CountingPool extends SealPool {
  opened = 0;
  sealed = 0;
  override open(
    data: string,
    key: RsaKey,
    profile: CryptoProfile,
    accept: ReadonlySet<CryptoFailureReason>,
  ): Promise<OpenOutcome> {
    this.opened++;
    return super.open(data, key, profile, accept);
  }
  override sealResponse(json: string, key: RsaKey, profile: CryptoProfile): Promise<string> {
    this.sealed++;
    return super.sealResponse(json, key, profile);
  }
}

/** Request crypto whose threads are always gone: every job fails as a dead thread's would. */
class DeadPool extends CountingPool {
  override open(): Promise<OpenOutcome> {
    this.opened++;
    return Promise.reject(new SealerStopped('the sealing thread stopped (exit code 3)'));
  }
  override sealResponse(): Promise<string> {
    this.sealed++;
    return Promise.reject(new SealerStopped('the sealing thread stopped (exit code 3)'));
  }
}

/** A callback sealer with no request crypto: the order endpoints' RSA work stays on the event loop. */
const sealerOnly = (pool: SealPool): CallbackSealer => ({
  get free() {
    return pool.free;
  },
  onFree: (listener) => pool.onFree(listener),
  seal: (text, key, profile) => pool.seal(text, key, profile),
  close: async () => undefined,
});

let dir: string;
let config: EmulatorConfig;
let merchant: EmulatorMerchant;
/** The same requests (the same ciphertexts) for every emulator. */
let sent: Array<[string, string]>;
const pools: SealPool[] = [];
/** Another key pair: a request sealed for it is a wrong key to the emulator. */
const stranger = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-crypto-'));
  config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  merchant = config.merchants[0]!;
  sent = requests();
});

afterAll(async () => {
  for (const pool of pools) await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

const form = (data: string) => new URLSearchParams({ data }).toString();
const order = (n: number) =>
  sealJson(
    `{"userId":${merchant.userId},"tenantUserId":"20931","tenantType":1,"callBackId":"cb-crypto-${n}","symbol":"USDT","chainName":"TRON","toAddr":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE","amount":12.5}`,
    'request',
    merchant.keyPair.publicKey,
  );

/** The requests every emulator gets: good orders and energy, and each kind of refused field. */
function requests(): Array<[string, string]> {
  const energy = sealJson('{"symbol":"ENERGY","chainName":"TRON"}', 'request', merchant.keyPair.publicKey);
  return [
    [ORDER, form(order(1))],
    [ORDER, form(order(1))],
    [ORDER, form(order(2))],
    [ENERGY, form(energy)],
    [ORDER, form('abc')],
    [ORDER, form(sealJson('{"a":1}', 'request', stranger.publicKey))],
    [ORDER, form(order(3).slice(0, -8))],
    [ENERGY, form(energy.replace(/=+$/, ''))],
  ];
}

/** Status and body of every request, the envelope's data opened (its Base64 is the sealer's own). */
async function answers(sealer: CallbackSealer): Promise<unknown[]> {
  const emulator = await startEmulator({ ...config, store: ':memory:' }, { port: 0, sealer });
  try {
    const out: unknown[] = [];
    for (const [path, body] of sent) {
      const response = await fetch(emulator.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
        body,
      });
      const json = (await response.json()) as { code?: unknown; data?: unknown };
      const data =
        json.code === 0 && typeof json.data === 'string'
          ? openJson(json.data, 'response', merchant.keyPair.publicKey).value
          : json.data;
      out.push({ status: response.status, ...json, data });
    }
    return out;
  } finally {
    await emulator.close();
  }
}

/** Order ids and biz ids are random: compare the answers' shape and every other value. */
const stable = (values: unknown[]) =>
  JSON.parse(JSON.stringify(values).replace(/"(biz|req)-[0-9a-f-]+"/g, '"$1-*"')) as unknown[];

describe("the order endpoints' RSA work on the sealing threads", () => {
  it('runs there, and answers exactly as on the event loop, for good and refused requests', async () => {
    const counting = new CountingPool();
    pools.push(counting);
    const onThreads = await answers(counting);
    const onLoop = await answers(sealerOnly(counting));
    expect(stable(onThreads)).toEqual(stable(onLoop));
    // Every request reached the pool (a refused Base64 text is named there too); each success was sealed there.
    const successes = onThreads.filter((answer) => (answer as { code?: unknown }).code === 0).length;
    expect(successes).toBeGreaterThanOrEqual(3);
    expect(counting.opened).toBe(sent.length);
    expect(counting.sealed).toBe(successes);
    expect(new Set(onThreads.map((answer) => (answer as { status: number }).status))).toEqual(new Set([200]));
  });

  it('leaves the threads to callbacks once half their queue is taken: the orders run on the event loop', async () => {
    const full = new (class extends CountingPool {
      override get roomForRequests(): boolean {
        return false;
      }
    })();
    const live = new SealPool();
    pools.push(full, live);
    const answered = await answers(full);
    expect([full.opened, full.sealed]).toEqual([0, 0]);
    expect(stable(answered)).toEqual(stable(await answers(sealerOnly(live))));
  });

  it('does the work on the event loop when a thread died, and the answers do not change', async () => {
    const live = new SealPool();
    const dead = new DeadPool();
    pools.push(live, dead);
    const fallback = await answers(dead);
    expect(dead.opened).toBeGreaterThan(0);
    expect(stable(fallback)).toEqual(stable(await answers(sealerOnly(live))));
  });
});
