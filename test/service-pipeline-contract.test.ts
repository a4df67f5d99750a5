// The contract of the one service pipeline (src/service/pipeline.ts): every request a service suite
// case sends goes to the emulator (node:http, SQLite) and, with the same keys and merchants, to the
// MSW handlers (Fetch API, memory); both must answer with the same status, body and wording.
// What may differ is named and normalised here: ids (requestId, bizId), the ciphertext of a
// success envelope (compared as its decrypted result), the energy count once the emulator's
// control API set a balance the handlers cannot be told (they have no control API), and the cases
// that close cards the emulator's registry does not hold (STATE_ONLY).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedConfig, emulatorTarget } from '../src/cli/embedded.js';
import { parseExactJson, stringifyExact, type ExactJson } from '../src/core/exact-json.js';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { halfFor, openJson } from '../src/crypto/codec.js';
import { publicHalf, type RsaKey } from '../src/crypto/keys.js';
import { describeMerchantKeys } from '../src/emulator/key-description.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { createWalletHandlers, type WalletMerchant } from '../src/generated/msw-handlers.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import { transportOf, type Transport } from '../src/runner/transport.js';
import { inKeyWindow } from '../src/platform/api-keys.js';
import { mswTransport } from './support/msw-transport.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const suites = loadSuites()
  .filter((suite) => suite.side === 'service')
  .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

/** One request sent to both, and what each answered (normalised). */
interface Pair {
  case: string;
  request: string;
  emulator: Normalised;
  msw: Normalised;
}

/**
 * Cases whose answers hang on state only the emulator has: its card registry (U-STATES, policy
 * cardRegistry: on) holds the cards its setup registered, while the handlers count every card of a
 * known merchant as open (`unknownCards: 'open'`, src/msw/operations.ts: a merchant's unit test
 * closes cards it never registered). They must differ (else this list is stale).
 */
const STATE_ONLY: Readonly<Record<string, string>> = {
  'service/card/unknown-card': 'a card no registry holds: the emulator answers CARD_NOT_FOUND, the handlers close it',
  'service/card/close-any-card-twice':
    'a card no registry holds, closed twice: CARD_NOT_FOUND twice, or closed then CARD_ALREADY_CLOSED',
};

interface Normalised {
  status: number;
  body: unknown;
}

/** Ids the two sides number differently (requestId, bizId: a uuid and hex in the emulator, a sequence in the handlers). */
const ID_FIELDS = ['requestId', 'bizId'];

/** `value` with the fields named replaced by their names, at any depth. */
function naming(value: unknown, fields: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => naming(item, fields));
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      fields.includes(key) && item !== null && typeof item !== 'object' ? `<${key}>` : naming(item, fields),
    ]),
  );
}

describe('the service pipeline: the emulator and the MSW handlers answer every suite request alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipeline-contract-'));
  let emulator: RunningEmulator | undefined;
  let merchant: MerchantServer | undefined;
  const pairs: Pair[] = [];

  beforeAll(async () => {
    // The emulator as `run` embeds it, with the reference merchant for its callbacks.
    const { config } = embeddedConfig(dir, false);
    const account = config.merchants[0]!;
    const keys = describeMerchantKeys(account);
    merchant = await startMerchantServer({
      apiKeys: [keys.apiKey],
      publicKey: account.keyPair.publicKey,
      profile: account.profile,
      store: new MemoryIdempotencyStore(),
    });
    account.callbackUrl = merchant.callbackUrl;
    emulator = await startEmulator(config, { port: 0 });
    const target = emulatorTarget(emulator, config, account);
    // The emulator's own setup, for the handlers: every merchant, each key in its window as a merchant of its own with its permissions.
    const now = Date.now();
    const merchants: WalletMerchant[] = config.merchants.flatMap((merchant) =>
      [
        ...(inKeyWindow({ notBefore: merchant.apiKeyValidFrom, notAfter: merchant.apiKeyValidUntil }, now)
          ? [{ apiKey: merchant.apiKey }]
          : []),
        ...merchant.apiKeys
          .filter((key) => inKeyWindow(key, now))
          .map((key) => ({ apiKey: key.key, permissions: key.permissions })),
      ].map((key) => ({
        userId: merchant.userId,
        privateKey: merchant.keyPair.privateKey,
        profile: merchant.profile,
        energy: merchant.energy,
        ...key,
      })),
    );
    const msw = mswTransport(
      createWalletHandlers({ baseUrl: target.baseUrl, cardBaseUrl: target.cardBaseUrl, merchants }),
    );
    const responseKey: RsaKey =
      halfFor('response', 'decrypt', target.profile) === 'public'
        ? target.publicKey
        : publicHalf(config.merchants[0]!.keyPair.privateKey);

    // Once the emulator's control API set a balance, its energy count is its own (the handlers start every merchant at the same balance).
    let balanceSet = false;
    const normalise = (status: number, bytes: Buffer): Normalised => {
      let body: unknown;
      try {
        body = parseExactJson(bytes.toString('utf8'));
      } catch {
        return { status, body: bytes.toString('utf8') };
      }
      const envelope = body as Record<string, ExactJson>;
      if (envelope && typeof envelope === 'object' && typeof envelope.data === 'string' && envelope.data !== '') {
        // The ciphertext differs per seal (and per engine): the result it carries must not.
        try {
          body = {
            ...envelope,
            data: { decrypted: openJson(envelope.data, 'response', responseKey, { profile: target.profile }).value },
          };
        } catch (error) {
          body = { ...envelope, data: `<does not open: ${(error as Error).message}>` };
        }
      }
      return {
        status,
        body: naming(JSON.parse(stringifyExact(body)), balanceSet ? [...ID_FIELDS, 'energyMaxCount'] : ID_FIELDS),
      };
    };

    let current = '';
    // One request at a time, the emulator first: both states see the same sequence.
    let queue: Promise<unknown> = Promise.resolve();
    const tee: Transport = {
      send(request) {
        const run = queue.then(async () => {
          const answer = await transportOf({}).send(request);
          const path = new URL(request.url).pathname;
          if (path.startsWith('/__control')) {
            if (path.includes('energy') && request.method !== 'GET') balanceSet = true;
            return answer;
          }
          const other = await msw.send(request);
          pairs.push({
            case: current,
            request: `${request.method} ${path}`,
            emulator: normalise(answer.status, answer.body),
            msw: normalise(other.status, other.body),
          });
          return answer;
        });
        queue = run.catch(() => undefined);
        return run;
      },
    };
    for (const suite of suites) {
      for (const one of suite.cases) {
        current = `${suite.name}/${one.id}`;
        // The run's transport is RunOptions.transport (src/runner/run-context.ts); a target's own is replaced by it.
        await runSuites({ target, suites: [{ ...suite, cases: [one] }], rules, transport: tee });
      }
    }
  }, 300_000);

  afterAll(async () => {
    await emulator?.close();
    await merchant?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the requests of the suites through both: each endpoint, from most cases', () => {
    expect(pairs.length).toBeGreaterThan(60);
    expect(new Set(pairs.map((pair) => pair.case)).size).toBeGreaterThan(
      suites.reduce((sum, suite) => sum + suite.cases.length, 0) / 2,
    );
    expect(new Set(pairs.map((pair) => pair.request))).toEqual(
      new Set([
        'POST /api/v1/api/order/getEnergyMaxCount',
        'POST /api/v1/api/order/withdrawWithoutVerify',
        'POST /card/close',
        ...pairs.map((pair) => pair.request),
      ]),
    );
  });

  it('gives the same status, body and wording for every request of every case, but the named ones', () => {
    const same = (pair: Pair) => JSON.stringify(pair.emulator) === JSON.stringify(pair.msw);
    const differing = pairs
      .filter((pair) => STATE_ONLY[pair.case] === undefined && !same(pair))
      .map(
        (pair) =>
          `${pair.case} ${pair.request}\n  emulator: ${JSON.stringify(pair.emulator)}\n  msw:      ${JSON.stringify(pair.msw)}`,
      );
    expect(differing).toEqual([]);
    expect(pairs.filter(same).length).toBeGreaterThan(60);
  });

  it('differs only where the emulator-only state says it must (a stale entry of STATE_ONLY fails)', () => {
    const cases = new Set(pairs.map((pair) => pair.case));
    for (const [id, reason] of Object.entries(STATE_ONLY)) {
      expect(cases.has(id), `${id} sends no request any more`).toBe(true);
      expect(
        pairs.some((pair) => pair.case === id && JSON.stringify(pair.emulator) !== JSON.stringify(pair.msw)),
        `${id}: ${reason}`,
      ).toBe(true);
    }
  });
});
