import { openSqlite, sqliteDriver, type SqliteDatabase } from '../platform/sqlite.js';
import { ConfigError } from '../core/errors.js';
import type { Energy, MerchantId, ServiceState } from '../service/state.js';
import { DeliveryOutbox, type AttemptRecord, type AttemptRow, type DueDelivery } from './outbox.js';
import { StateTables } from './state-tables.js';

/**
 * The emulator's store: one SQLite connection (through src/platform/sqlite.ts: node:sqlite or
 * better-sqlite3) holding two parts, the service state (`state-tables.ts`: merchants, energy,
 * orders, cards) and the delivery outbox (`outbox.ts`: events, deliveries, attempts, claims), and
 * the adapter that makes the first the service's `ServiceState` ({@link storeServiceState}). A file
 * store survives a restart with nothing lost; `:memory:` is for throwaway runs.
 */

/** 2: an attempt is a row from the moment it is queued (phase, queued_at, sent_at, settled_at); 1 is migrated in place. */
const SCHEMA_VERSION = 2;

/**
 * Opens (or creates) the emulator's SQLite store.
 *
 * @example const store = openEmulatorStore(':memory:'); store.energy(10086)
 */
export function openEmulatorStore(path: string): EmulatorStore {
  // No driver (better-sqlite3 missing where Node has no node:sqlite) is its own one-line error, not the file's.
  sqliteDriver();
  let db: SqliteDatabase;
  try {
    db = openSqlite(path);
  } catch (error) {
    throw new ConfigError('bad-store', `cannot open the emulator store ${path}: ${(error as Error).message}`);
  }
  try {
    return new EmulatorStore(db);
  } catch (error) {
    db.close();
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('bad-store', `cannot use ${path} as the emulator store: ${(error as Error).message}`);
  }
}

/**
 * The emulator's store: the service state's tables and the outbox on one connection. Its methods
 * are those of the two parts (the control API, the dispatcher and the tests call them here);
 * `transaction` spans both, so an order and its callback event commit together.
 */
export class EmulatorStore {
  readonly #db: SqliteDatabase;
  /** The service state: merchants, energy, orders, tenant ids, cards, close serials. */
  readonly state: StateTables;
  /** The delivery outbox: events, deliveries, attempts, claims. */
  readonly outbox: DeliveryOutbox;
  readonly #transaction: (fn: () => unknown) => unknown;
  // The outbox's transactions, as unbound function fields: a test may replace one with a wrapper.
  /** Queues an event and its deliveries in one transaction; its id. */
  readonly insertEvent: DeliveryOutbox['insertEvent'];
  /** Claims due deliveries; see {@link DeliveryOutbox.claimDue}. */
  readonly claimDue: DeliveryOutbox['claimDue'];
  /** Writes one batch of the dispatcher's outbox in one transaction; a verdict per send, in order. */
  readonly writeOutbox: DeliveryOutbox['writeOutbox'];
  /** At start: settles what an earlier process left open; see {@link DeliveryOutbox.recoverOpenAttempts}. */
  readonly recoverOpenAttempts: DeliveryOutbox['recoverOpenAttempts'];

  constructor(db: SqliteDatabase) {
    this.#db = db;
    if (db.name !== ':memory:') {
      db.pragma('journal_mode = WAL');
      // A crash may lose the last commits of an emulator, never corrupt them; FULL costs a sync per request.
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('busy_timeout = 5000');
    const version = db.pragma('user_version', { simple: true }) as number;
    // Version 1 is migrated in place (the outbox adds the attempt columns of version 2).
    if (version !== 0 && version !== 1 && version !== SCHEMA_VERSION) {
      throw new ConfigError(
        'bad-store',
        `the emulator store ${db.name} has schema version ${version}, this emulator uses ${SCHEMA_VERSION}: delete it to start afresh`,
      );
    }
    this.state = new StateTables(db);
    this.outbox = new DeliveryOutbox(db);
    ({
      insertEvent: this.insertEvent,
      claimDue: this.claimDue,
      writeOutbox: this.writeOutbox,
      recoverOpenAttempts: this.recoverOpenAttempts,
    } = this.outbox);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    this.#transaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Runs `fn` in one transaction of the connection (a savepoint inside another); a throw rolls back. */
  transaction<T>(fn: () => T): T {
    return this.#transaction(fn) as T;
  }

  // The service state (state-tables.ts).

  /** Adds a merchant and its missing cards; see {@link StateTables.seedMerchant}. */
  seedMerchant(
    userId: number,
    energy: Energy,
    callbackUrl: string | undefined,
    cards: ReadonlyArray<{ powerCardId: string; merchantUserId: string; status: 'open' | 'closed' }>,
  ): void {
    this.state.seedMerchant(userId, energy, callbackUrl, cards);
  }

  /** The merchant's live energy, or undefined for an unknown merchant. */
  energy(userId: number): Energy | undefined {
    return this.state.energy(userId);
  }

  /** Sets balance and cost per transaction. */
  setEnergy(userId: number, energy: Energy): void {
    this.state.setEnergy(userId, energy);
  }

  /** The merchant's callback URL (null when none). */
  callbackUrl(userId: number): string | null {
    return this.state.callbackUrl(userId);
  }

  /** Points the merchant's callbacks at `url`. */
  setCallbackUrl(userId: number, url: string): void {
    this.state.setCallbackUrl(userId, url);
  }

  /** A recorded order. */
  order(
    merchant: number,
    callBackId: string,
  ): { kind: string; amount: string; status: string; txid: string | null; tenantUserId: string } | undefined {
    return this.state.order(merchant, callBackId);
  }

  /** A card of a merchant. */
  card(merchant: number, powerCardId: string): { merchantUserId: string; status: 'open' | 'closed' } | undefined {
    return this.state.card(merchant, powerCardId);
  }

  /** Creates an open card, or reopens an existing one for `merchantUserId`. */
  openCard(merchant: number, powerCardId: string, merchantUserId: string): void {
    this.state.openCard(merchant, powerCardId, merchantUserId);
  }

  // The delivery outbox (outbox.ts).

  /** Deliveries due at `now` (at most `limit`) whose merchant has a callback URL and is not in `exclude`. */
  dueDeliveries(now: number, limit: number, exclude: readonly number[] = []): DueDelivery[] {
    return this.outbox.dueDeliveries(now, limit, exclude);
  }

  /** When the next pending delivery is due (undefined when none waits), leaving out the merchants in `exclude`. */
  nextDueAt(exclude: readonly number[] = []): number | undefined {
    return this.outbox.nextDueAt(exclude);
  }

  /** Deliveries not finished yet (pending or waiting for the one before them). */
  unfinishedDeliveries(): number {
    return this.outbox.unfinishedDeliveries();
  }

  /** Every attempt of the events with this trackingId, oldest first; undefined when no such event exists. */
  attempts(trackingId: string): AttemptRecord[] | undefined {
    return this.outbox.attempts(trackingId);
  }

  /** Every attempt row of the events with this trackingId, whatever its phase, oldest first. */
  attemptRows(trackingId: string): AttemptRow[] {
    return this.outbox.attemptRows(trackingId);
  }

  /** The state of one delivery (tests, diagnostics). */
  delivery(eventId: number, idx: number): { state: string; attempts: number; acked: boolean } | undefined {
    return this.outbox.delivery(eventId, idx);
  }

  /** Closes the database. */
  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

/**
 * The store as the service's state (src/service/state.ts) for the merchants of the config: reads and
 * writes on its tables and outbox, the decisions left to the service's operations. A merchant's
 * userId becomes the SQLite INTEGER it is stored under. Pending lease debits (policy leaseDebit:
 * later) live in memory: a restart forgets debits not yet due.
 *
 * @example const state = storeServiceState(openEmulatorStore(':memory:'), [10086]); state.energy(10086n)
 */
export function storeServiceState(store: EmulatorStore, merchants: Iterable<number>): ServiceState {
  const known = new Set(merchants);
  const id = (merchant: MerchantId): number => Number(merchant);
  const { state, outbox } = store;
  return {
    pendingDebits: [],
    hasMerchant: (merchant) => known.has(id(merchant)) && BigInt(id(merchant)) === merchant,
    energy: (merchant) => state.energy(id(merchant)),
    order: (merchant, callBackId) => state.order(id(merchant), callBackId),
    card: (merchant, powerCardId) => state.card(id(merchant), powerCardId),
    closeSerialUsed: (merchant, closeSerialNo) => state.closeSerialUsed(id(merchant), closeSerialNo),
    tenantNumber: (merchant, tenantUserId) => state.tenantNumericId(id(merchant), tenantUserId),
    setBalance: (merchant, balance) => state.setBalance(id(merchant), balance),
    insertOrder: (order) => state.insertOrder({ ...order, merchant: id(order.merchant) }),
    queueCallback: (callback) => void outbox.insertEvent({ ...callback, merchant: id(callback.merchant) }),
    recordClose: (close) =>
      state.recordClose(id(close.merchant), close.powerCardId, close.merchantUserId, close.closeSerialNo, close.bizId),
    transaction: (fn) => store.transaction(fn),
  };
}
