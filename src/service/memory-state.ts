import type { CardClose, CloseOutcome, CreateOrderOutcome, Energy, LeaseDebit, MerchantId, NewOrder, PendingDebit, QueuedCallback, ServiceState } from './state.js';

/** Options of {@link MemoryServiceState}. */
interface MemoryStateOptions {
  /** The merchants and their energy; the energy objects are the live balances (leases lower them in place). */
  merchants: Iterable<{ userId: MerchantId; energy: Energy }>;
  /**
   * A card the state was never told about (U-STATES): `open` counts every card of a known merchant
   * as open, held by whichever merchantUserId asks, until it is closed here (the MSW handlers:
   * a merchant's unit test closes cards it never registered); `unknown` knows only cards added with
   * {@link MemoryServiceState.openCard} (the emulator's card registry). Default `open`.
   */
  unknownCards?: 'open' | 'unknown';
}

/**
 * The service's state in memory: one set of MSW handlers, or a unit test of the operations. Nothing
 * survives the process; a callback is kept in {@link callbacks} (nothing is sent).
 */
export class MemoryServiceState implements ServiceState {
  readonly pendingDebits: PendingDebit[] = [];
  /** Callbacks queued with their orders, oldest first. */
  readonly callbacks: QueuedCallback[] = [];
  readonly #energy = new Map<MerchantId, Energy>();
  readonly #orders = new Map<string, NewOrder>();
  readonly #tenants = new Map<string, number>();
  readonly #cards = new Map<string, { merchantUserId: string; status: 'open' | 'closed'; bizId?: string }>();
  readonly #serials = new Set<string>();
  readonly #unknownCards: 'open' | 'unknown';

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

  debitEnergy(merchant: MerchantId, cost: bigint): void {
    const energy = this.#energy.get(merchant);
    if (energy) energy.balance = energy.balance > cost ? energy.balance - cost : 0n;
  }

  createOrder(order: NewOrder, lease: LeaseDebit | undefined, callback: QueuedCallback | undefined): CreateOrderOutcome {
    const key = `${order.merchant}\u0000${order.callBackId}`;
    if (this.#orders.has(key)) return 'duplicate';
    if (lease) {
      const energy = this.#energy.get(order.merchant);
      const balance = energy?.balance ?? 0n;
      if (lease.cost + (lease.pending ?? 0n) > balance) return 'insufficient';
      if (lease.debit !== false && energy) energy.balance = balance - lease.cost;
    }
    this.#orders.set(key, order);
    if (callback) this.callbacks.push(callback);
    return 'ok';
  }

  order(merchant: MerchantId, callBackId: string): { tenantUserId: string } | undefined {
    return this.#orders.get(`${merchant}\u0000${callBackId}`);
  }

  tenantNumber(merchant: MerchantId, tenantUserId: string): number {
    const key = `${merchant}\u0000${tenantUserId}`;
    let number = this.#tenants.get(key);
    if (number === undefined) {
      number = this.#tenants.size + 1;
      this.#tenants.set(key, number);
    }
    return number;
  }

  /** Registers an open card (or reopens one) for `merchantUserId`. */
  openCard(merchant: MerchantId, powerCardId: string, merchantUserId: string): void {
    this.#cards.set(this.#cardKey(merchant, powerCardId, merchantUserId), { merchantUserId, status: 'open' });
  }

  closeCard(close: CardClose): CloseOutcome {
    const serial = `${close.merchant}\u0000${close.closeSerialNo}`;
    if (close.checkSerial && this.#serials.has(serial)) return 'duplicate-serial';
    const key = this.#cardKey(close.merchant, close.powerCardId, close.merchantUserId);
    const card = this.#cards.get(key);
    if (!card && close.registry && this.#unknownCards === 'unknown') return 'not-found';
    if (card && card.merchantUserId !== close.merchantUserId) return 'not-found';
    if (card?.status === 'closed') return 'already-closed';
    this.#cards.set(key, { merchantUserId: close.merchantUserId, status: 'closed', bizId: close.bizId });
    this.#serials.add(serial);
    return 'closed';
  }

  /** Cards are per merchant; with `unknownCards: open` a card is also per holder (any holder may close "its" card once). */
  #cardKey(merchant: MerchantId, powerCardId: string, merchantUserId: string): string {
    return this.#unknownCards === 'open' ? `${merchant}\u0000${merchantUserId}\u0000${powerCardId}` : `${merchant}\u0000${powerCardId}`;
  }
}
