import type { SqliteDatabase } from '../platform/sqlite.js';
import type { Energy, NewOrder as ServiceOrder } from '../service/state.js';

/**
 * The service's state in the emulator's SQLite store: merchants (energy, callback URL), orders,
 * surrogate tenant ids, cards and close serial numbers. Reads and writes only: the decisions over
 * them are the service's (src/service/order.ts, card-close.ts, energy.ts), reached through
 * `storeServiceState` (store.ts). Amounts and balances are TEXT (exact decimal digits), never REAL.
 */

/** The tables of the service state (created if missing). */
const STATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS merchants (
  user_id       INTEGER PRIMARY KEY,
  balance       TEXT NOT NULL,
  cost_per_tx   TEXT NOT NULL,
  callback_url  TEXT,
  seed          TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS orders (
  merchant        INTEGER NOT NULL,
  call_back_id    TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('withdrawal', 'energy')),
  tenant_user_id  TEXT NOT NULL,
  symbol          TEXT NOT NULL,
  chain           TEXT NOT NULL,
  to_addr         TEXT NOT NULL,
  amount          TEXT NOT NULL,
  expiry_hours    INTEGER,
  status          TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'active')),
  txid            TEXT,
  created_at      INTEGER NOT NULL,
  completed_at    INTEGER,
  PRIMARY KEY (merchant, call_back_id)
) STRICT;
CREATE TABLE IF NOT EXISTS tenant_ids (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  merchant        INTEGER NOT NULL,
  tenant_user_id  TEXT NOT NULL,
  UNIQUE (merchant, tenant_user_id)
) STRICT;
CREATE TABLE IF NOT EXISTS cards (
  merchant          INTEGER NOT NULL,
  power_card_id     TEXT NOT NULL,
  merchant_user_id  TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  biz_id            TEXT,
  PRIMARY KEY (merchant, power_card_id)
) STRICT;
CREATE TABLE IF NOT EXISTS close_serials (
  merchant       INTEGER NOT NULL,
  serial         TEXT NOT NULL,
  power_card_id  TEXT NOT NULL,
  PRIMARY KEY (merchant, serial)
) STRICT;
`;

/** An order to record (ORDER-*): the service's NewOrder, its merchant by the userId as an SQLite INTEGER. */
type NewOrder = Omit<ServiceOrder, 'merchant'> & { merchant: number };

function prepare(db: SqliteDatabase) {
  return {
    seed: db.prepare<[number], { seed: string }>('SELECT seed FROM merchants WHERE user_id = ?'),
    seedMerchant: db.prepare<[number, string, string, string | null, string]>(
      'INSERT INTO merchants (user_id, balance, cost_per_tx, callback_url, seed) VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET balance = excluded.balance, cost_per_tx = excluded.cost_per_tx, callback_url = excluded.callback_url, seed = excluded.seed',
    ),
    energy: db.prepare<[number], { balance: string; cost_per_tx: string }>(
      'SELECT balance, cost_per_tx FROM merchants WHERE user_id = ?',
    ),
    setEnergy: db.prepare<[string, string, number]>(
      'UPDATE merchants SET balance = ?, cost_per_tx = ? WHERE user_id = ?',
    ),
    setBalance: db.prepare<[string, number]>('UPDATE merchants SET balance = ? WHERE user_id = ?'),
    callbackUrl: db.prepare<[number], { callback_url: string | null }>(
      'SELECT callback_url FROM merchants WHERE user_id = ?',
    ),
    setCallbackUrl: db.prepare<[string, number]>('UPDATE merchants SET callback_url = ? WHERE user_id = ?'),
    insertOrder: db.prepare(
      'INSERT INTO orders (merchant, call_back_id, kind, tenant_user_id, symbol, chain, to_addr, amount, expiry_hours, status, txid, created_at) VALUES (@merchant, @callBackId, @kind, @tenantUserId, @symbol, @chain, @toAddr, @amount, @expiryHours, @status, @txid, @createdAt)',
    ),
    order: db.prepare<
      [number, string],
      { kind: string; amount: string; status: string; txid: string | null; tenantUserId: string }
    >(
      'SELECT kind, amount, status, txid, tenant_user_id AS tenantUserId FROM orders WHERE merchant = ? AND call_back_id = ?',
    ),
    insertTenant: db.prepare<[number, string]>(
      'INSERT OR IGNORE INTO tenant_ids (merchant, tenant_user_id) VALUES (?, ?)',
    ),
    tenant: db.prepare<[number, string], { id: number }>(
      'SELECT id FROM tenant_ids WHERE merchant = ? AND tenant_user_id = ?',
    ),
    seedCard: db.prepare<[number, string, string, string]>(
      'INSERT OR IGNORE INTO cards (merchant, power_card_id, merchant_user_id, status) VALUES (?, ?, ?, ?)',
    ),
    upsertCard: db.prepare<[number, string, string]>(
      "INSERT INTO cards (merchant, power_card_id, merchant_user_id, status) VALUES (?, ?, ?, 'open') ON CONFLICT (merchant, power_card_id) DO UPDATE SET merchant_user_id = excluded.merchant_user_id, status = 'open', biz_id = NULL",
    ),
    card: db.prepare<[number, string], { merchant_user_id: string; status: 'open' | 'closed' }>(
      'SELECT merchant_user_id, status FROM cards WHERE merchant = ? AND power_card_id = ?',
    ),
    closeCard: db.prepare<[string, number, string]>(
      "UPDATE cards SET status = 'closed', biz_id = ? WHERE merchant = ? AND power_card_id = ?",
    ),
    hasSerial: db.prepare<[number, string], { one: number }>(
      'SELECT 1 AS one FROM close_serials WHERE merchant = ? AND serial = ?',
    ),
    insertSerial: db.prepare<[number, string, string]>(
      'INSERT OR IGNORE INTO close_serials (merchant, serial, power_card_id) VALUES (?, ?, ?)',
    ),
  };
}

/** The service state's tables on the store's one connection; every method is synchronous. */
export class StateTables {
  readonly #db: SqliteDatabase;
  readonly #stmt: ReturnType<typeof prepare>;

  /** Creates the tables if missing and prepares the statements (the store checked the schema version). */
  constructor(db: SqliteDatabase) {
    this.#db = db;
    db.exec(STATE_SCHEMA);
    this.#stmt = prepare(db);
  }

  /**
   * Adds a merchant and its missing cards. A merchant the store knows keeps its live state (energy
   * after leases and control calls, callback URL) unless the config's values changed since they were
   * seeded: an edit of the YAML takes effect, a restart alone loses nothing.
   */
  seedMerchant(
    userId: number,
    energy: Energy,
    callbackUrl: string | undefined,
    cards: ReadonlyArray<{ powerCardId: string; merchantUserId: string; status: 'open' | 'closed' }>,
  ): void {
    const seed = JSON.stringify([energy.balance.toString(), energy.costPerTx.toString(), callbackUrl ?? null]);
    this.#db.transaction(() => {
      if (this.#stmt.seed.get(userId)?.seed !== seed) {
        this.#stmt.seedMerchant.run(
          userId,
          energy.balance.toString(),
          energy.costPerTx.toString(),
          callbackUrl ?? null,
          seed,
        );
      }
      for (const card of cards) this.#stmt.seedCard.run(userId, card.powerCardId, card.merchantUserId, card.status);
    })();
  }

  /** The merchant's live energy, or undefined for an unknown merchant. */
  energy(userId: number): Energy | undefined {
    const row = this.#stmt.energy.get(userId);
    return row ? { balance: BigInt(row.balance), costPerTx: BigInt(row.cost_per_tx) } : undefined;
  }

  /** Sets balance and cost per transaction. */
  setEnergy(userId: number, energy: Energy): void {
    this.#stmt.setEnergy.run(energy.balance.toString(), energy.costPerTx.toString(), userId);
  }

  /** Sets the balance alone. */
  setBalance(userId: number, balance: bigint): void {
    this.#stmt.setBalance.run(balance.toString(), userId);
  }

  /** The merchant's callback URL (null when none). */
  callbackUrl(userId: number): string | null {
    return this.#stmt.callbackUrl.get(userId)?.callback_url ?? null;
  }

  /** Points the merchant's callbacks at `url`. */
  setCallbackUrl(userId: number, url: string): void {
    this.#stmt.setCallbackUrl.run(url, userId);
  }

  /** A recorded order. */
  order(
    merchant: number,
    callBackId: string,
  ): { kind: string; amount: string; status: string; txid: string | null; tenantUserId: string } | undefined {
    return this.#stmt.order.get(merchant, callBackId);
  }

  /** Records an order: a withdrawal `processing` until its callback is first answered, a lease `active`. */
  insertOrder(order: NewOrder): void {
    this.#stmt.insertOrder.run({
      ...order,
      expiryHours: order.expiryHours ?? null,
      txid: order.txid ?? null,
      status: order.kind === 'withdrawal' ? 'processing' : 'active',
    });
  }

  /** A stable surrogate id for a tenantUserId that is not a decimal integer (ORDER-RES needs an integer). */
  tenantNumericId(merchant: number, tenantUserId: string): number {
    this.#stmt.insertTenant.run(merchant, tenantUserId);
    return this.#stmt.tenant.get(merchant, tenantUserId)!.id;
  }

  /** A card of a merchant. */
  card(merchant: number, powerCardId: string): { merchantUserId: string; status: 'open' | 'closed' } | undefined {
    const row = this.#stmt.card.get(merchant, powerCardId);
    return row ? { merchantUserId: row.merchant_user_id, status: row.status } : undefined;
  }

  /** Creates an open card, or reopens an existing one for `merchantUserId`. */
  openCard(merchant: number, powerCardId: string, merchantUserId: string): void {
    this.#stmt.upsertCard.run(merchant, powerCardId, merchantUserId);
  }

  /** Was `serial` used by an earlier close of the merchant? */
  closeSerialUsed(merchant: number, serial: string): boolean {
    return this.#stmt.hasSerial.get(merchant, serial) !== undefined;
  }

  /** Records a close: the card closed with `bizId` (recorded closed, held by `merchantUserId`, if never seen), the serial used. */
  recordClose(merchant: number, powerCardId: string, merchantUserId: string, serial: string, bizId: string): void {
    this.#stmt.seedCard.run(merchant, powerCardId, merchantUserId, 'closed');
    this.#stmt.closeCard.run(bizId, merchant, powerCardId);
    this.#stmt.insertSerial.run(merchant, serial, powerCardId);
  }
}
