/**
 * What the wallet service remembers between requests, as an interface of reads, writes and a
 * transaction: the emulator keeps it in SQLite (src/emulator/store.ts), the MSW handlers in memory
 * (memory-state.ts). The operations (operations.ts) read and change the state only through it and
 * make every decision themselves, so both adapters share one model and one set of answers.
 * Merchants are named by their userId as an exact integer.
 */

/** A merchant's userId in the wallet system. */
export type MerchantId = bigint;

/** A merchant's energy: exact integers. */
export interface Energy {
  balance: bigint;
  costPerTx: bigint;
}

/** An order to record (ORDER-*). */
export interface NewOrder {
  merchant: MerchantId;
  callBackId: string;
  kind: 'withdrawal' | 'energy';
  tenantUserId: string;
  symbol: string;
  chain: string;
  toAddr: string;
  /** Exact decimal text. */
  amount: string;
  expiryHours?: number;
  txid?: string;
  createdAt: number;
}

/** The energy an order leases: its cost, whether it is debited at once, and debits still pending (U-STATES). */
export interface LeaseDebit {
  cost: bigint;
  /** false: checked against the balance (less `pending`) but not debited now (policy leaseDebit). */
  debit?: boolean;
  pending?: bigint;
}

/** A lease debit not yet applied (policy leaseDebit: later). */
export interface PendingDebit {
  merchant: MerchantId;
  cost: bigint;
  dueAt: number;
}

/** A callback event to queue with its order (the withdrawal callback, type 3). */
export interface QueuedCallback {
  trackingId: string;
  merchant: MerchantId;
  type: number;
  /** The payload's exact JSON text, without requestUUID (set per delivery, CB-UUID). */
  payload: string;
  deliveries: number;
  concurrent: boolean;
  retryDelaysMs?: number[];
  fixedUuid: string;
  /** callBackId of the order this event completes. */
  orderId?: string;
  createdAt: number;
  /** First delivery is due at this instant. */
  dueAt: number;
}

/** A card close the operation asks for: the card, the new bizId, and how the policies read the state. */
export interface CardClose {
  merchant: MerchantId;
  powerCardId: string;
  merchantUserId: string;
  closeSerialNo: string;
  bizId: string;
  /** false: a closeSerialNo may repeat (policy closeSerialNo: ignored). */
  checkSerial: boolean;
  /** false: a card never registered is closed once (policy cardRegistry: off). */
  registry: boolean;
}

/** Outcome of a card close (card-close.ts decides it over the state's reads). */
export type CloseOutcome = 'closed' | 'not-found' | 'already-closed' | 'duplicate-serial';

/** Outcome of recording an order (order.ts decides it over the state's reads). */
export type CreateOrderOutcome = 'ok' | 'duplicate' | 'insufficient';

/** An order as the operations read it back. */
export interface StoredOrder {
  tenantUserId: string;
}

/** A card as the state holds it. */
export interface StoredCard {
  merchantUserId: string;
  status: 'open' | 'closed';
}

/** A closed card to record: the card is closed with its bizId (recorded so if never seen), its serial used. */
export interface ClosedCard {
  merchant: MerchantId;
  powerCardId: string;
  merchantUserId: string;
  closeSerialNo: string;
  bizId: string;
}

/**
 * The service's state: reads, writes and a transaction, nothing else. The decisions (a used
 * callBackId, the energy lease against the balance, the precedence of a card close) are made once,
 * by the operations in this folder over these reads and writes; an adapter only stores. A
 * decision and its writes run in one {@link ServiceState.transaction} (one SQLite transaction in
 * the emulator: an order and its callback are recorded together or not at all).
 */
export interface ServiceState {
  // Reads.
  /** Is `merchant` a merchant of this service (card close's merchantId)? */
  hasMerchant(merchant: MerchantId): boolean;
  /** The merchant's live energy, or undefined for an unknown merchant. */
  energy(merchant: MerchantId): Energy | undefined;
  /** A recorded order. */
  order(merchant: MerchantId, callBackId: string): StoredOrder | undefined;
  /**
   * The card `powerCardId` of `merchant` as `merchantUserId` asks for it; undefined: the state was
   * never told about it (the in-memory state may hold every card of a known merchant open, U-STATES).
   */
  card(merchant: MerchantId, powerCardId: string, merchantUserId: string): StoredCard | undefined;
  /** Was `closeSerialNo` used by an earlier close of the merchant? */
  closeSerialUsed(merchant: MerchantId, closeSerialNo: string): boolean;
  /** A number n ≥ 1 for a tenantUserId that is not a decimal integer (surrogate id 9e15 + n, ORDER-RES): stable and distinct per tenant, not necessarily dense; given on first ask. */
  tenantNumber(merchant: MerchantId, tenantUserId: string): number;
  /**
   * Lease debits not yet applied, oldest first (policy leaseDebit: later). They live in memory in
   * both adapters: a restart forgets debits not yet due, as a service that debits on a later event may.
   */
  readonly pendingDebits: PendingDebit[];

  // Writes.
  /** Sets the merchant's balance (an unknown merchant: nothing happens). */
  setBalance(merchant: MerchantId, balance: bigint): void;
  /** Records an order (its callBackId unused: the caller checked). */
  insertOrder(order: NewOrder): void;
  /** Queues a callback event for delivery (the emulator's outbox; the in-memory state keeps it). */
  queueCallback(callback: QueuedCallback): void;
  /** Records a close: the card closed with its bizId (recorded closed if never seen), the serial used. */
  recordClose(close: ClosedCard): void;

  /** Runs `fn` as one transaction: its writes all happen or, if it throws, none does. */
  transaction<T>(fn: () => T): T;
}

/** Where queued callbacks go out: the emulator's dispatcher; the MSW handlers send none. */
export interface CallbackQueue {
  /** `callback` was recorded with its order: deliver it when due. */
  queued(callback: QueuedCallback): void;
}
