import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../platform/sqlite.js';
import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import type { Plain, ServiceContext } from '../service/service-context.js';
import { MemoryServiceState } from '../service/memory-state.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { DEFAULT_POLICIES, type ServicePolicies } from '../service/policies.js';
import type { NewOrder, QueuedCallback, ServiceState } from '../service/state.js';
import { openEmulatorStore, storeServiceState } from './store.js';

const n = (text: string) => new LosslessNumber(text);
const order = (fields: Record<string, unknown> = {}): Plain =>
  ({
    userId: n('10086'),
    tenantUserId: 'alice',
    tenantType: n('1'),
    callBackId: 'cb-1',
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9',
    amount: n('123456789012.123456'),
    ...fields,
  }) as Plain;
const lease = (fields: Record<string, unknown> = {}) =>
  order({ symbol: 'ENERGY', amount: n('3'), expiryHours: n('24'), callBackId: 'el-1', ...fields });
const card = (fields: Record<string, unknown> = {}): Plain =>
  ({
    merchantId: '10086',
    merchantUserId: 'u-1',
    powerCardId: 'pc-1',
    channel: 'APP',
    closeSerialNo: 'cs-1',
    ...fields,
  }) as Plain;
const energy = { symbol: 'ENERGY', chainName: 'TRON' };

/** A scenario: every step's outcome as text, on one state. */
function play(state: ServiceState, queued: QueuedCallback[], policies: Partial<ServicePolicies>): string[] {
  let clock = 1_000;
  let count = 0;
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: (callback) => queued.push(callback) },
    policies: { ...DEFAULT_POLICIES, ...policies },
    now: () => clock,
    random: { uuid: () => `uuid-${++count}`, hex: (bytes) => String(++count).padStart(bytes * 2, '0') },
    withdrawalDelayMs: 100,
    bizId: () => `biz-${++count}`,
  };
  const ops = SERVICE_OPERATIONS;
  const m = 10086n;
  const steps = [
    () => ops.getEnergyMaxCount(ctx, m, energy),
    () => ops.withdrawWithoutVerify(ctx, m, order()),
    () => ops.withdrawWithoutVerify(ctx, m, order({ callBackId: 'cb-2', tenantUserId: 'bob' })),
    // Surrogate numbers are stable and distinct, not dense: SQLite spends one on a lookup of a known tenant.
    () => ops.withdrawWithoutVerify(ctx, m, order({ amount: n('1') })),
    () => ops.withdrawWithoutVerify(ctx, m, lease()),
    () => ops.withdrawWithoutVerify(ctx, m, lease({ callBackId: 'el-2', amount: n('400') })),
    () => ops.getEnergyMaxCount(ctx, m, energy),
    () => ((clock += 5_000), ops.getEnergyMaxCount(ctx, m, energy)),
    () => ops.closeCard(ctx, card()),
    () => ops.closeCard(ctx, card({ closeSerialNo: 'cs-2' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-2' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-9', closeSerialNo: 'cs-9' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-9', closeSerialNo: 'cs-10' })),
    () => ops.closeCard(ctx, card({ merchantId: '1' })),
  ];
  return steps.map((step) => {
    const outcome = step();
    return outcome.ok ? `ok ${stringifyExact(outcome.result)}` : `${outcome.failure}: ${outcome.message}`;
  });
}

function memory(): MemoryServiceState {
  const state = new MemoryServiceState({
    merchants: [{ userId: 10086n, energy: { balance: 20_000_000n, costPerTx: 64_000n } }],
    unknownCards: 'unknown',
  });
  state.openCard(10086n, 'pc-1', 'u-1');
  state.openCard(10086n, 'pc-2', 'u-1');
  return state;
}

function sqlite(): ServiceState {
  const store = openEmulatorStore(':memory:');
  store.seedMerchant(10086, { balance: 20_000_000n, costPerTx: 64_000n }, undefined, [
    { powerCardId: 'pc-1', merchantUserId: 'u-1', status: 'open' },
    { powerCardId: 'pc-2', merchantUserId: 'u-1', status: 'open' },
  ]);
  return storeServiceState(store, [10086]);
}

describe('the SQLite store as the service state', () => {
  it.each<[string, Partial<ServicePolicies>]>([
    ['the default policies', {}],
    [
      'leaseDebit later, duplicates replayed, serials ignored, no card registry',
      {
        leaseDebit: 'later',
        leaseDebitDelayMs: 1_000,
        duplicateCallBackId: 'replay',
        closeSerialNo: 'ignored',
        cardRegistry: 'off',
      },
    ],
    ['leaseDebit never', { leaseDebit: 'never' }],
  ])('answers every step as the in-memory state does under %s', (_name, policies) => {
    const fromMemory: QueuedCallback[] = [];
    const fromSqlite: QueuedCallback[] = [];
    const expected = play(memory(), fromMemory, policies);
    expect(play(sqlite(), fromSqlite, policies)).toEqual(expected);
    expect(fromSqlite).toEqual(fromMemory);
    // The scenario is not vacuous: orders, surrogate ids, leases and closes all happened.
    expect(expected.filter((line) => line.startsWith('ok'))).not.toHaveLength(0);
    expect(expected.join('\n')).toContain('"tenantUserId":9000000000000001');
    expect(fromMemory).toHaveLength(2);
  });

  it('knows only the merchants of the config, by their exact userId', () => {
    const state = sqlite();
    expect([10086n, 10087n, 10086n + 2n ** 64n].map((id) => state.hasMerchant(id))).toEqual([true, false, false]);
  });
});

describe('the reads, writes and transaction of both states', () => {
  const m = 10086n;
  const newOrder = (callBackId: string): NewOrder => ({
    merchant: m,
    callBackId,
    kind: 'withdrawal',
    tenantUserId: 'alice',
    symbol: 'USDT',
    chain: 'TRON',
    toAddr: 'TQn9',
    amount: '1.5',
    txid: 'tx',
    createdAt: 1,
  });
  const callback = (trackingId: string): QueuedCallback => ({
    trackingId,
    merchant: m,
    type: 3,
    payload: '{"type":3}',
    deliveries: 1,
    concurrent: false,
    fixedUuid: 'u',
    orderId: 'cb-1',
    createdAt: 1,
    dueAt: 1,
  });
  /** Both states with a way to list the trackingIds queued so far (among `ids`). */
  function both(): Array<[string, ServiceState, (ids: string[]) => string[]]> {
    const inMemory = memory();
    const store = openEmulatorStore(':memory:');
    store.seedMerchant(10086, { balance: 20_000_000n, costPerTx: 64_000n }, undefined, [
      { powerCardId: 'pc-1', merchantUserId: 'u-1', status: 'open' },
      { powerCardId: 'pc-2', merchantUserId: 'u-1', status: 'open' },
    ]);
    return [
      ['memory', inMemory, () => inMemory.callbacks.map((queued) => queued.trackingId)],
      [
        'sqlite',
        storeServiceState(store, [10086]),
        (ids) => ids.filter((trackingId) => store.attempts(trackingId) !== undefined),
      ],
    ];
  }
  /** What a state holds, read through its interface alone. */
  const snapshot = (state: ServiceState, queued: (ids: string[]) => string[]) => ({
    energy: state.energy(m),
    orders: ['cb-1', 'cb-2'].map((id) => state.order(m, id)?.tenantUserId),
    cards: (['pc-1', 'pc-2', 'pc-9'] as const).map((card) => state.card(m, card, 'u-1')),
    otherHolder: state.card(m, 'pc-1', 'u-2'),
    serials: ['cs-1', 'cs-9'].map((serial) => state.closeSerialUsed(m, serial)),
    queued: queued(['wd-1', 'wd-2']),
  });

  it('reads back what was written, the same in memory and in SQLite', () => {
    const answers = both().map(([, state, queued]) => {
      const before = snapshot(state, queued);
      state.setBalance(m, 5n);
      state.setBalance(1n, 9n);
      state.insertOrder(newOrder('cb-1'));
      state.queueCallback(callback('wd-1'));
      state.recordClose({
        merchant: m,
        powerCardId: 'pc-1',
        merchantUserId: 'u-1',
        closeSerialNo: 'cs-1',
        bizId: 'biz-1',
      });
      // A card never registered is recorded closed, held by the user who closed it (policy cardRegistry: off).
      state.recordClose({
        merchant: m,
        powerCardId: 'pc-9',
        merchantUserId: 'u-1',
        closeSerialNo: 'cs-9',
        bizId: 'biz-9',
      });
      return { before, after: snapshot(state, queued), unknown: state.energy(1n) };
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toEqual({
      before: {
        energy: { balance: 20_000_000n, costPerTx: 64_000n },
        orders: [undefined, undefined],
        cards: [{ merchantUserId: 'u-1', status: 'open' }, { merchantUserId: 'u-1', status: 'open' }, undefined],
        otherHolder: { merchantUserId: 'u-1', status: 'open' },
        serials: [false, false],
        queued: [],
      },
      after: {
        energy: { balance: 5n, costPerTx: 64_000n },
        orders: ['alice', undefined],
        cards: [
          { merchantUserId: 'u-1', status: 'closed' },
          { merchantUserId: 'u-1', status: 'open' },
          { merchantUserId: 'u-1', status: 'closed' },
        ],
        otherHolder: { merchantUserId: 'u-1', status: 'closed' },
        serials: [true, true],
        queued: ['wd-1'],
      },
      unknown: undefined,
    });
  });

  it('keeps none of the writes of a transaction that throws, and those of one that returns', () => {
    const answers = both().map(([, state, queued]) => {
      const before = snapshot(state, queued);
      expect(() =>
        state.transaction(() => {
          state.setBalance(m, 5n);
          state.insertOrder(newOrder('cb-1'));
          state.queueCallback(callback('wd-1'));
          state.recordClose({
            merchant: m,
            powerCardId: 'pc-1',
            merchantUserId: 'u-1',
            closeSerialNo: 'cs-1',
            bizId: 'biz-1',
          });
          throw new Error('crash between the order and its answer');
        }),
      ).toThrow('crash between');
      const afterThrow = snapshot(state, queued);
      // Nested: the inner transaction throws and is caught; the outer one keeps its own writes.
      const result = state.transaction(() => {
        state.insertOrder(newOrder('cb-2'));
        try {
          state.transaction(() => {
            state.queueCallback(callback('wd-2'));
            throw new Error('inner');
          });
        } catch {
          // the inner writes are gone, the outer ones stay
        }
        state.queueCallback(callback('wd-1'));
        return 'done';
      });
      return { afterThrow, before, result, after: snapshot(state, queued) };
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]!.afterThrow).toEqual(answers[0]!.before);
    expect(answers[0]).toMatchObject({ result: 'done', after: { orders: [undefined, 'alice'], queued: ['wd-1'] } });
  });
});

describe('the callback outbox', () => {
  const url = 'http://127.0.0.1:9/callback';
  function outbox(path = ':memory:') {
    const store = openEmulatorStore(path);
    store.seedMerchant(7, { balance: 0n, costPerTx: 1n }, url, []);
    return store;
  }
  const event = (trackingId: string) => ({
    trackingId,
    merchant: 7,
    type: 4,
    payload: '{"type":4}',
    deliveries: 1,
    concurrent: false,
    fixedUuid: 'u',
    createdAt: 0,
    dueAt: 0,
  });
  const claim = (store: ReturnType<typeof outbox>, now: number) => store.claimDue(now, 10, now + 1_000);
  const send = (delivery: ReturnType<typeof claim>[number], max: number, sentAt = 1) => ({
    attemptId: delivery.attemptId,
    delivery,
    maxAttempts: max,
    requestUUID: 'r',
    sentAt,
  });
  const settled = (
    delivery: ReturnType<typeof claim>[number],
    verdict: 'acknowledged' | 'rejected',
    update: { state: 'pending'; nextAt: number } | { state: 'acknowledged' | 'exhausted' },
  ) => ({
    attemptId: delivery.attemptId,
    delivery,
    attempt: { at: new Date(2).toISOString(), requestUUID: 'r', status: 200, answer: null, verdict },
    update,
    settledAt: 2,
  });

  it('counts an attempt at send time and refuses one past maxAttempts (a hard cap)', () => {
    const store = outbox();
    store.insertEvent(event('cap'));
    const [first] = claim(store, 0);
    expect(store.writeOutbox({ sends: [send(first!, 1)], settled: [], unsent: [] }, 1)).toEqual(['sent']);
    expect(store.delivery(1, 0)).toEqual({ state: 'pending', attempts: 1, acked: false });
    // A stale claim of the same delivery (its lease ran out while the first was under way) is not counted, so not sent.
    expect(store.writeOutbox({ sends: [send(first!, 2)], settled: [], unsent: [] }, 1)).toEqual(['changed']);
    expect(store.writeOutbox({ sends: [send({ ...first!, attempts: 1 }, 1)], settled: [], unsent: [] }, 1)).toEqual([
      'capped',
    ]);
    expect(store.delivery(1, 0)).toEqual({ state: 'exhausted', attempts: 1, acked: false });
  });

  it('never sends an acknowledged delivery again, and never marks it exhausted', () => {
    const store = outbox();
    store.insertEvent(event('ack'));
    const [first] = claim(store, 0);
    store.writeOutbox({ sends: [send(first!, 3)], settled: [], unsent: [] }, 1);
    store.writeOutbox(
      { sends: [], settled: [settled(first!, 'acknowledged', { state: 'acknowledged' })], unsent: [] },
      2,
    );
    expect(store.writeOutbox({ sends: [send({ ...first!, attempts: 1 }, 3)], settled: [], unsent: [] }, 3)).toEqual([
      'acknowledged',
    ]);
    // A give-up written after the acknowledgement (a late outcome) leaves it acknowledged.
    store.writeOutbox({ sends: [], settled: [settled(first!, 'rejected', { state: 'exhausted' })], unsent: [] }, 4);
    expect(store.delivery(1, 0)).toEqual({ state: 'acknowledged', attempts: 1, acked: true });
  });

  it('records queued, sent and outcome in that order, and an unsent attempt without counting it', () => {
    const store = outbox();
    store.insertEvent(event('order'));
    const [first] = claim(store, 10);
    expect(store.attemptRows('order')).toEqual([
      expect.objectContaining({ phase: 'queued', queuedAt: 10, sentAt: null, settledAt: null }),
    ]);
    store.writeOutbox(
      {
        sends: [],
        settled: [],
        unsent: [
          {
            attemptId: first!.attemptId,
            delivery: first!,
            reason: 'not sent: no free connection',
            dueAt: 20,
            settledAt: 15,
          },
        ],
      },
      15,
    );
    expect(store.delivery(1, 0)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(store.attempts('order')).toEqual([]);
    const [second] = claim(store, 20);
    store.writeOutbox({ sends: [send(second!, 3, 21)], settled: [], unsent: [] }, 21);
    store.writeOutbox(
      { sends: [], settled: [settled(second!, 'acknowledged', { state: 'acknowledged' })], unsent: [] },
      22,
    );
    expect(store.attemptRows('order').map((row) => [row.phase, row.queuedAt, row.sentAt, row.settledAt])).toEqual([
      ['not-sent', 10, null, 15],
      ['done', 20, 21, 2],
    ]);
    expect(store.attempts('order')).toHaveLength(1);
  });

  it('settles at start what a stopped process left open: a sent attempt counts with an unknown outcome, a queued one never left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-outbox-'));
    try {
      const path = join(dir, 'store.sqlite');
      const before = outbox(path);
      before.insertEvent(event('sent'));
      before.insertEvent(event('queued'));
      const claimed = claim(before, 0);
      before.writeOutbox({ sends: [send(claimed[0]!, 3)], settled: [], unsent: [] }, 1);
      before.close();
      const after = outbox(path);
      expect(after.recoverOpenAttempts(5_000)).toEqual({ sent: 1, queued: 1 });
      expect(after.attempts('sent')).toEqual([
        expect.objectContaining({
          status: 0,
          verdict: 'failed',
          error: 'outcome unknown: the emulator stopped before the answer arrived',
        }),
      ]);
      expect(after.attemptRows('queued')).toEqual([
        expect.objectContaining({ phase: 'not-sent', error: 'not sent: the emulator stopped before it was sent' }),
      ]);
      expect([after.delivery(1, 0), after.delivery(2, 0)]).toEqual([
        { state: 'pending', attempts: 1, acked: false },
        { state: 'pending', attempts: 0, acked: false },
      ]);
      expect(after.nextDueAt()).toBe(5_000);
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migrates a version-1 store in place, keeping its attempts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-outbox-'));
    try {
      const path = join(dir, 'v1.sqlite');
      const db = openSqlite(path);
      db.exec(`CREATE TABLE delivery_attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id INTEGER NOT NULL, tracking_id TEXT NOT NULL, idx INTEGER NOT NULL, attempt INTEGER NOT NULL, at TEXT NOT NULL,
        request_uuid TEXT NOT NULL, status INTEGER NOT NULL, answer TEXT NOT NULL, verdict TEXT NOT NULL CHECK (verdict IN ('acknowledged', 'rejected', 'failed')), error TEXT) STRICT;
        CREATE TABLE callback_events (id INTEGER PRIMARY KEY AUTOINCREMENT, tracking_id TEXT NOT NULL, merchant INTEGER NOT NULL, type INTEGER NOT NULL, payload TEXT NOT NULL, deliveries INTEGER NOT NULL,
        concurrent INTEGER NOT NULL, retry_delays TEXT, fixed_uuid TEXT NOT NULL, order_id TEXT, created_at INTEGER NOT NULL) STRICT;
        INSERT INTO callback_events (tracking_id, merchant, type, payload, deliveries, concurrent, fixed_uuid, created_at) VALUES ('old', 7, 4, '{}', 1, 0, 'u', 0);
        INSERT INTO delivery_attempts (event_id, tracking_id, idx, attempt, at, request_uuid, status, answer, verdict) VALUES (1, 'old', 0, 1, '2026-01-01T00:00:00.000Z', 'r', 200, '{"errCode":0}', 'acknowledged');
        PRAGMA user_version = 1;`);
      db.close();
      const store = outbox(path);
      expect(store.attempts('old')).toEqual([
        {
          at: '2026-01-01T00:00:00.000Z',
          requestUUID: 'r',
          status: 200,
          answer: { errCode: new LosslessNumber('0') },
          verdict: 'acknowledged',
        },
      ]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
