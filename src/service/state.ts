/**
 * What the wallet service remembers between requests, as an interface: the emulator keeps it in
 * SQLite (src/emulator/store.ts), the MSW handlers in memory (memory-state.ts). The operations
 * (operations.ts) read and change the state only through it, so both adapters share one model.
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

/** A card close to record. */
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

/** Outcome of a card close in the state. */
export type CloseOutcome = 'closed' | 'not-found' | 'already-closed' | 'duplicate-serial';

/** Outcome of recording an order. */
export type CreateOrderOutcome = 'ok' | 'duplicate' | 'insufficient';

/** The service's state. Each mutation is atomic (one SQLite transaction in the emulator). */
export interface ServiceState {
  /** Is `merchant` a merchant of this service (card close's merchantId)? */
  hasMerchant(merchant: MerchantId): boolean;
  /** The merchant's live energy, or undefined for an unknown merchant. */
  energy(merchant: MerchantId): Energy | undefined;
  /** Lowers the balance by `cost` (a deferred lease debit), never below 0. */
  debitEnergy(merchant: MerchantId, cost: bigint): void;
  /**
   * Lease debits not yet applied, oldest first (policy leaseDebit: later). They live in memory in
   * both adapters: a restart forgets debits not yet due, as a service that debits on a later event may.
   */
  readonly pendingDebits: PendingDebit[];
  /**
   * Records an order in one step: refuses a used callBackId (`duplicate`), checks the lease against
   * the balance less pending debits (`insufficient`) and debits it unless `lease.debit` is false,
   * and queues `callback` with the order, so neither survives a crash without the other.
   */
  createOrder(order: NewOrder, lease: LeaseDebit | undefined, callback: QueuedCallback | undefined): CreateOrderOutcome;
  /** A recorded order. */
  order(merchant: MerchantId, callBackId: string): { tenantUserId: string } | undefined;
  /** A number n ≥ 1 for a tenantUserId that is not a decimal integer (surrogate id 9e15 + n, ORDER-RES): stable and distinct per tenant, not necessarily dense. */
  tenantNumber(merchant: MerchantId, tenantUserId: string): number;
  /** Closes a card: a reused serial first (when checked), then the card's registration and status. */
  closeCard(close: CardClose): CloseOutcome;
}

/** Where queued callbacks go out: the emulator's dispatcher; the MSW handlers send none. */
export interface CallbackQueue {
  /** `callback` was recorded with its order: deliver it when due. */
  queued(callback: QueuedCallback): void;
}
