import type {
  ClosedCard,
  Energy,
  MerchantId,
  NewOrder,
  PendingDebit,
  QueuedCallback,
  ServiceState,
  StoredCard,
  StoredOrder,
} from './state.js';

/** Options of {@link MemoryServiceState}. */
interface MemoryStateOptions {
  /** The merchants and their energy; the energy objects are the live balances (leases lower them in place). */
  merchants: Iterable<{ userId: MerchantId; energy: Energy }>;
  /**
   * A card the state was never told about (U-STATES): `open` holds every card of a known merchant
   * open, held by whichever merchantUserId asks, until it is closed here (the MSW handlers: a
   * merchant's unit test closes cards it never registered); `unknown` knows only cards added with
   * {@link MemoryServiceState.openCard} (the emulator's card registry). Default `open`.
   */
  unknownCards?: 'open' | 'unknown';
}

/**
 * The service's state in memory: one set of MSW handlers, or a unit test of the operations. It only
 * stores; the operations decide. Nothing survives the process; a callback is kept in
 * {@link callbacks} (nothing is sent). A transaction that throws undoes its writes, as SQLite's does.
 */
export class MemoryServiceState implements ServiceState {
  readonly pendingDebits: PendingDebit[] = [];
  /** Callbacks queued with their orders, oldest first. */
  readonly callbacks: QueuedCallback[] = [];
  readonly #energy = new Map<MerchantId, Energy>();
  readonly #orders = new Map<string, NewOrder>();
  readonly #tenants = new Map<string, number>();
  readonly #cards = new Map<string, StoredCard & { bizId?: string }>();
  readonly #serials = new Set<string>();
  readonly #unknownCards: 'open' | 'unknown';
  /** Undo steps of the transaction under way (innermost last); undefined outside one. */
  #undo: Array<() => void> | undefined;

  constructor(options: MemoryStateOptions) {
    for (const merchant of options.merchants) this.#energy.set(merchant.userId, merchant.energy);
    this.#unknownCards = options.unknownCards ?? 'open';
  }

  hasMerchant(merchant: MerchantId): boolean {
    return this.#energy.has(merchant);
  }

  energy(merchant: MerchantId): Energy | undefined {
    const energy = this.#energy.get(merchant);
    return energy && { balance: energy.balance, costPerTx: energy.costPerTx };
  }

  order(merchant: MerchantId, callBackId: string): StoredOrder | undefined {
    return this.#orders.get(`${merchant}\u0000${callBackId}`);
  }

  card(merchant: MerchantId, powerCardId: string, merchantUserId: string): StoredCard | undefined {
    const card = this.#cards.get(this.#cardKey(merchant, powerCardId, merchantUserId));
    if (card) return { merchantUserId: card.merchantUserId, status: card.status };
    return this.#unknownCards === 'open' && this.#energy.has(merchant) ? { merchantUserId, status: 'open' } : undefined;
  }

  closeSerialUsed(merchant: MerchantId, closeSerialNo: string): boolean {
    return this.#serials.has(`${merchant}\u0000${closeSerialNo}`);
  }

  tenantNumber(merchant: MerchantId, tenantUserId: string): number {
    const key = `${merchant}\u0000${tenantUserId}`;
    let number = this.#tenants.get(key);
    if (number === undefined) {
      number = this.#tenants.size + 1;
      this.#tenants.set(key, number);
      this.#undo?.push(() => this.#tenants.delete(key));
    }
    return number;
  }

  setBalance(merchant: MerchantId, balance: bigint): void {
    const energy = this.#energy.get(merchant);
    if (!energy) return;
    const before = energy.balance;
    energy.balance = balance;
    this.#undo?.push(() => (energy.balance = before));
  }

  insertOrder(order: NewOrder): void {
    const key = `${order.merchant}\u0000${order.callBackId}`;
    this.#orders.set(key, order);
    this.#undo?.push(() => this.#orders.delete(key));
  }

  queueCallback(callback: QueuedCallback): void {
    this.callbacks.push(callback);
    this.#undo?.push(() => this.callbacks.splice(this.callbacks.lastIndexOf(callback), 1));
  }

  recordClose(close: ClosedCard): void {
    const key = this.#cardKey(close.merchant, close.powerCardId, close.merchantUserId);
    const serial = `${close.merchant}\u0000${close.closeSerialNo}`;
    const before = this.#cards.get(key);
    const serialBefore = this.#serials.has(serial);
    this.#cards.set(key, { merchantUserId: close.merchantUserId, status: 'closed', bizId: close.bizId });
    this.#serials.add(serial);
    this.#undo?.push(() => {
      if (before) this.#cards.set(key, before);
      else this.#cards.delete(key);
      if (!serialBefore) this.#serials.delete(serial);
    });
  }

  transaction<T>(fn: () => T): T {
    const outer = this.#undo;
    const undo: Array<() => void> = [];
    this.#undo = undo;
    try {
      const result = fn();
      outer?.push(...undo);
      return result;
    } catch (error) {
      for (const step of undo.reverse()) step();
      throw error;
    } finally {
      this.#undo = outer;
    }
  }

  /** Registers an open card (or reopens one) for `merchantUserId`. */
  openCard(merchant: MerchantId, powerCardId: string, merchantUserId: string): void {
    this.#cards.set(this.#cardKey(merchant, powerCardId, merchantUserId), { merchantUserId, status: 'open' });
  }

  /** Cards are per merchant; with `unknownCards: open` a card is also per holder (any holder may close "its" card once). */
  #cardKey(merchant: MerchantId, powerCardId: string, merchantUserId: string): string {
    return this.#unknownCards === 'open'
      ? `${merchant}\u0000${merchantUserId}\u0000${powerCardId}`
      : `${merchant}\u0000${powerCardId}`;
  }
}
