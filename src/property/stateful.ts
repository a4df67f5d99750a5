import fc from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import {
  restoreControlState,
  runControl,
  runRequest,
  snapshotControlState,
  type Capabilities,
  type Exchange,
} from '../runner/api.js';
import {
  energyLeased,
  energyObserved,
  energyReadings,
  energySet,
  unknownEnergy,
  type EnergyKnowledge,
} from './energy-model.js';
import type { Property, Verdict, Warning } from './property.js';
import {
  asSent,
  judgeValidAnswer,
  ordersAllowed,
  readEnvelope,
  seal,
  sendData,
  type ServiceEnv,
} from './service-exchange.js';
import {
  CARDS,
  commandsFor,
  describeCommand,
  hugeEnergyExamples,
  SETUP_ENERGY,
  type StateCommand,
} from './stateful-commands.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A card as the model sees it: never touched, registered open, or closed. */
type CardState = 'unknown' | 'open' | 'closed';

/** The model of one sequence. */
interface Model {
  energy: EnergyKnowledge;
  /** Orders the service accepted: the plain request as sent and whether it was a lease. */
  orders: Array<{ sent: Record<string, ExactJson>; lease: boolean }>;
  cards: CardState[];
  cardsRegistrable: boolean;
  cardsJudged: boolean;
}

/** What one step of the run shows in the report: the command, the plain request, the answer (decrypted). */
interface LogEntry {
  step: number;
  command: string;
  request?: string;
  status?: number | string;
  answer?: string;
  expected?: string;
}

/** The service's side of one sequence: its log (the report's evidence), its first warning, what it showed. */
interface Real {
  log: LogEntry[];
  warning?: Warning;
  repeatedLeaseAccepted: boolean;
  caseNo: number;
}

/** A failing step: stops the sequence; the property reports it with the log. */
class StepFailure extends Error {
  constructor(readonly verdict: Extract<Verdict, { ok: false }>) {
    super(verdict.message);
  }
}

/** What the property needs of the target, or why it cannot run. */
function statefulSkip(env: ServiceEnv, capabilities: Capabilities | undefined): string | undefined {
  if (!env.target.controlToken) return 'needs the control API (--control-token) to set the energy balance';
  const route = capabilities?.routes['PUT energy'];
  if (!route?.present) return `needs PUT /__control/merchants/{userId}/energy (${route ? route.detail : 'not probed'})`;
  return undefined;
}

const preview = (text: string | undefined, max = 300) =>
  text === undefined ? undefined : text.length > max ? `${text.slice(0, max)}…` : text;

/** Adds an exchange to the sequence's log, with what the model expected of it. */
function logExchange(real: Real, command: string, exchange: Exchange, expected?: string): LogEntry {
  const response = exchange.response;
  const entry: LogEntry = {
    step: real.log.length,
    command,
    ...(exchange.request.plain
      ? { request: exchange.request.plain }
      : exchange.request.body
        ? { request: preview(exchange.request.body)! }
        : {}),
    status: response ? response.status : (exchange.error ?? 'no answer'),
    ...(response
      ? {
          answer: response.decrypted
            ? `${preview(response.body, 120)} → data ${response.decrypted.text}`
            : preview(response.body)!,
        }
      : {}),
    ...(expected ? { expected } : {}),
  };
  real.log.push(entry);
  return entry;
}

/** What a step failure or warning shows of its answer: the exchange as sent and received. */
function exchangeEvidence(exchange: Exchange) {
  return {
    exchanges: [
      {
        request: exchange.request,
        response: exchange.response ?? null,
        ...(exchange.error ? { error: exchange.error } : {}),
      },
    ],
  };
}

/** The first lines of a schema's issues, for a message. */
function issueList(issues: ReturnType<typeof validateSchema>): string {
  return issues
    .slice(0, 3)
    .map((issue) => issue.message)
    .join('; ');
}

/**
 * The property's run against one target: the energy model it keeps across sequences, whether the
 * service debits a lease at once, and the steps a sequence's commands run (each sends a request,
 * logs it, and checks the answer against the model).
 */
class StatefulRun {
  private readonly target: ServiceEnv['target'];
  // The energy model lives across sequences: a debit of an earlier sequence may still land (U-STATES).
  readonly energy = unknownEnergy();
  /**
   * Whether the service debits a lease at once, as the calibration showed (twice: a clean query, a
   * lease of one transaction, one transaction less at the next query). Then the model is exact:
   * any energyMaxCount that no order of debits explains fails. Otherwise (a lease lands later or
   * never, U-STATES), a lease of this property, or one made before it (by the suites, another
   * property), may land at any time, and only the bound holds: debits never raise energyMaxCount
   * above floor(balance set last / cost), nor above its value at the previous query.
   */
  private atOnce = false;
  /** The highest energyMaxCount the next query may read when debits may land late. */
  private ceiling = 0n;
  /** Whether the run set the energy (then it is put back at the end). */
  touched = false;
  /** How many sequences ran. */
  private cases = 0;

  constructor(private readonly env: ServiceEnv) {
    this.target = env.target;
  }

  private floorOfSet(): bigint {
    return this.energy.balance / this.energy.cost;
  }

  private fail(real: Real, message: string, rules: string[], exchange?: Exchange): never {
    throw new StepFailure({
      ok: false,
      message: `${message} [step ${real.log.length - 1} of the sequence]`,
      rules,
      evidence: { sequence: real.log, ...(exchange ? exchangeEvidence(exchange) : {}) },
    });
  }

  private warn(real: Real, message: string, rules: string[]): void {
    real.warning ??= {
      message: `${message} [step ${real.log.length - 1}]`,
      rules,
      evidence: { sequence: [...real.log] },
    };
  }

  /**
   * Whether the answer is a success (envelope code 0): false for a refusal (an HTTP 4xx, or a
   * non-zero code with an error text); anything else fails the step under `resultRule` or the
   * envelope's rules.
   */
  private succeeded(real: Real, exchange: Exchange, resultRule: string): boolean {
    const read = readEnvelope(exchange, [resultRule, 'ENV-CODE']);
    if ('ok' in read)
      this.fail(real, read.ok ? 'unreadable answer' : read.message, read.ok ? [resultRule] : read.rules, exchange);
    if ('refusedHttp' in read) return false;
    const { envelope, code } = read as { envelope: Record<string, unknown>; code: string };
    if (code === '0') return true;
    if (typeof envelope.message !== 'string' || envelope.message === '')
      this.fail(real, `refusal code ${code} without an error text in message`, ['ENV-MSG'], exchange);
    return false;
  }

  async setEnergy(real: Real, balance: number | string, costPerTx: number | string, label: string): Promise<void> {
    // Exact numbers on the wire (runControl writes the body with stringifyExact): a balance past 2^53 keeps its digits.
    const exact = (value: number | string) => new LosslessNumber(String(value)) as unknown as number;
    const exchange = await runControl(
      { energy: { balance: exact(balance), costPerTx: exact(costPerTx) } },
      this.target,
    );
    this.touched = true;
    logExchange(real, label, exchange);
    const status = exchange.response?.status ?? 0;
    if (
      status >= 400 &&
      status < 500 &&
      status !== 401 &&
      status !== 403 &&
      (BigInt(balance) > MAX_SAFE || BigInt(costPerTx) > MAX_SAFE)
    ) {
      // U-LIMITS: a service may refuse a balance it cannot hold; the energy stays as it was, and the model with it.
      real.log[real.log.length - 1]!.expected = 'set, or refused (U-LIMITS: a balance past 2^53)';
      return;
    }
    if (exchange.error || !exchange.response) {
      // The control API is the toolkit's lever, not the interface: without it nothing can be judged.
      throw new Error(`the control API did not set the energy: ${exchange.error ?? 'no answer'}`);
    }
    energySet(this.energy, BigInt(balance), BigInt(costPerTx));
    this.ceiling = this.floorOfSet();
  }

  /** Queries energyMaxCount and checks it against the model; the value read, or undefined when refused. */
  async query(real: Real, label: string): Promise<bigint | undefined> {
    const text = stringifyExact({ symbol: 'ENERGY', chainName: 'TRON' });
    const exchange = await sendData(this.env, 'energy', seal(this.env, text), text);
    const { own, low, high } = energyReadings(this.energy);
    logExchange(
      real,
      label,
      exchange,
      low === high ? own : `${own} (the model's reading; a later debit: ${low} to ${high})`,
    );
    if (!this.succeeded(real, exchange, 'ENERGY-RES')) return;
    const response = exchange.response!;
    const decrypted = response.decrypted;
    if (!decrypted)
      this.fail(
        real,
        response.decryptError
          ? `success whose data does not decrypt: ${response.decryptError}`
          : 'success without data',
        ['ENERGY-RES', 'CRYPTO-ENVELOPE'],
        exchange,
      );
    const issues = validateSchema('EnergyMaxCountResult', decrypted!.value);
    if (issues.length > 0)
      this.fail(
        real,
        `success whose decrypted result breaks EnergyMaxCountResult: ${issueList(issues)}`,
        [...new Set(issues.flatMap((issue) => issue.rules))],
        exchange,
      );
    const got = BigInt((decrypted!.value as Record<string, LosslessNumber>).energyMaxCount!.value);
    if (this.atOnce) this.judgeExact(real, got, exchange);
    else this.judgeBound(real, got, exchange);
    if (got.toString() !== own)
      this.warn(
        real,
        `energyMaxCount ${got}, not ${own} (every accepted lease debited at once, the model's reading): a lease debited later or never, a legal reading of when a lease lowers the energy`,
        ['U-STATES'],
      );
    return got;
  }

  /**
   * A service that does not debit at once (or whose reading is not known): a lease of this property, or one made before it
   * (by the suites, another property), may land at any time. What still holds: debits only lower the balance set last.
   */
  private judgeBound(real: Real, got: bigint, exchange: Exchange): void {
    const { ceiling } = this;
    if (got > ceiling)
      this.fail(
        real,
        `energyMaxCount ${got} is above ${ceiling}, ${ceiling === this.floorOfSet() ? `floor(${this.energy.balance} / ${this.energy.cost}) of the balance set last` : 'its value at the last query'}: without a new balance, debits only lower it`,
        ['ENERGY-FLOOR'],
        exchange,
      );
    this.ceiling = got;
    this.energy.states = [];
  }

  /** A service that debits at once: the value read must be one some order of the accepted leases' debits gives. */
  private judgeExact(real: Real, got: bigint, exchange: Exchange): void {
    const { energy } = this;
    const { own, low, high } = energyReadings(energy);
    if (energyObserved(energy, got)) return;
    const repeated = real.repeatedLeaseAccepted
      ? '; an energy lease with a repeated callBackId was accepted before: was it debited again? (ORDER-CALLBACK-ID)'
      : '';
    this.fail(
      real,
      `energyMaxCount ${got} is no legal reading of the live balance: expected ${own} = floor((${energy.balance} - debits since it was set) / ${energy.cost}) with every accepted lease debited${low === high ? '' : ` (debits landing later, in order, would give other values from ${low} to ${high}, not this one)`}${repeated}`,
      real.repeatedLeaseAccepted ? ['ENERGY-FLOOR', 'ORDER-CALLBACK-ID'] : ['ENERGY-FLOOR'],
      exchange,
    );
  }

  orderPlain(real: Real, symbol: string, amount: ExactJson, expiryHours?: number): Record<string, ExactJson> {
    return {
      userId: new LosslessNumber(String(this.target.userId)),
      tenantUserId: '20931',
      tenantType: new LosslessNumber('1'),
      callBackId: `st${real.caseNo}-${real.log.length}`,
      symbol,
      chainName: 'TRON',
      toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
      amount,
      ...(expiryHours === undefined ? {} : { expiryHours: new LosslessNumber(String(expiryHours)) }),
    };
  }

  async order(
    model: Model,
    real: Real,
    label: string,
    plain: Record<string, ExactJson>,
    lease: boolean,
  ): Promise<void> {
    const sent = asSent(this.env, { endpoint: 'order', plain });
    const text = stringifyExact(sent);
    const exchange = await sendData(this.env, 'order', seal(this.env, text), text);
    logExchange(
      real,
      label,
      exchange,
      lease ? 'accepted (then debited) or refused' : 'accepted or refused; the energy unchanged',
    );
    const verdict = judgeValidAnswer(exchange, { endpoint: 'order', plain }, sent);
    if (!verdict.ok) this.fail(real, verdict.message, verdict.rules, exchange);
    if ((verdict as { tag?: string }).tag !== 'accepted') return;
    model.orders.push({ sent, lease });
    if (lease) energyLeased(this.energy, BigInt(String(plain.amount)) * this.energy.cost);
  }

  async repeat(model: Model, real: Real, label: string, pick: number): Promise<void> {
    const original = model.orders[pick % model.orders.length]!;
    const text = stringifyExact(original.sent);
    const exchange = await sendData(this.env, 'order', seal(this.env, text), text);
    logExchange(real, label, exchange, 'refused (or the first result again, U-STATES)');
    if (!this.succeeded(real, exchange, 'ORDER-RES')) return;
    // The other reading: the first order's result again. It must still be a valid result for this callBackId.
    const verdict = judgeValidAnswer(exchange, { endpoint: 'order', plain: original.sent }, original.sent);
    if (!verdict.ok)
      this.fail(
        real,
        `a repeated callBackId answered as a success with a wrong result: ${verdict.message}`,
        verdict.rules,
        exchange,
      );
    if (original.lease) real.repeatedLeaseAccepted = true;
    this.warn(
      real,
      `an order repeating the callBackId ${stringifyExact(original.sent.callBackId ?? null)} was answered as a success (the first order's result again), not refused: the merchant keeps callBackIds unique (ORDER-CALLBACK-ID), and how a service answers a repeat is open`,
      ['U-STATES'],
    );
  }

  private cardId(real: Real, card: number): string {
    return `pc-${this.env.tag}-${real.caseNo}-${card}`;
  }

  async registerCard(model: Model, real: Real, label: string, card: number): Promise<void> {
    const exchange = await runControl(
      { card: { powerCardId: this.cardId(real, card), merchantUserId: 'u-20931' } },
      this.target,
    );
    logExchange(real, label, exchange);
    if (exchange.error || !exchange.response)
      throw new Error(`the control API did not register the card: ${exchange.error ?? 'no answer'}`);
    model.cards[card] = 'open';
  }

  async closeCard(model: Model, real: Real, label: string, card: number): Promise<void> {
    const state = model.cards[card]!;
    const json = {
      merchantId: String(this.target.userId),
      merchantUserId: 'u-20931',
      powerCardId: this.cardId(real, card),
      channel: 'APP',
      closeSerialNo: `cls-${this.env.tag}-${real.caseNo}-${real.log.length}`,
    };
    const exchange = await runRequest(
      { endpoint: 'card', json },
      this.target,
      { caseId: 'generated', saved: {} },
      this.env.stranger,
    );
    const expected =
      state === 'open'
        ? 'success (a registered open card)'
        : state === 'closed'
          ? 'refused (a closed card stays closed)'
          : 'success or refused (an unknown card, U-STATES)';
    logExchange(real, label, exchange, expected);
    const response = exchange.response;
    if (!response)
      this.fail(real, `card close got no answer: ${exchange.error ?? 'the connection ended'}`, ['CARD-RES'], exchange);
    if (response!.status === 401 || response!.status === 403) {
      // U-CARD-AUTH: the toolkit sends no credential; nothing about the close can be judged.
      model.cardsJudged = false;
      return;
    }
    if (response!.json === undefined)
      this.fail(
        real,
        `card close answered HTTP ${response!.status} with a body that is not JSON`,
        ['CARD-RES'],
        exchange,
      );
    const issues = validateSchema('CardCloseResponse', response!.json);
    const success = (response!.json as { success?: unknown }).success;
    if (issues.length > 0)
      this.fail(
        real,
        `card close answered HTTP ${response!.status} outside the response shape: ${issueList(issues)}`,
        success === false ? ['CARD-ERR'] : ['CARD-RES'],
        exchange,
      );
    if (state === 'open' && success !== true)
      this.fail(real, 'closing a registered open card was refused', ['CARD-RES'], exchange);
    if (state === 'closed' && success === true)
      this.warn(
        real,
        `card #${card} was closed a second time: a closed card stays closed (how a service answers is open)`,
        ['U-STATES'],
      );
    if (success === true) model.cards[card] = 'closed';
  }

  /**
   * Before the first sequence: a clean query, a lease of one transaction and a query, twice, show
   * whether the service debits at once (and the exact model applies). A failure here is left to
   * the generated sequences to find and report.
   */
  async calibrate(): Promise<void> {
    if (!ordersAllowed(this.target)) return;
    let shown = 0;
    for (let round = 0; round < 2; round++) {
      const real: Real = { log: [], repeatedLeaseAccepted: false, caseNo: -round };
      const model: Model = { energy: this.energy, orders: [], cards: [], cardsRegistrable: false, cardsJudged: false };
      try {
        await this.setEnergy(real, SETUP_ENERGY.balance, SETUP_ENERGY.costPerTx, 'calibration: set energy');
        const clean = this.floorOfSet();
        const before = await this.query(real, 'calibration: query energyMaxCount');
        await this.order(
          model,
          real,
          'calibration: lease 1 transaction',
          this.orderPlain(real, 'ENERGY', new LosslessNumber('1'), 1),
          true,
        );
        const after =
          model.orders.length === 1 ? await this.query(real, 'calibration: query energyMaxCount') : undefined;
        if (before !== clean || after !== clean - 1n) break;
        shown++;
      } catch (error) {
        if (!(error instanceof StepFailure)) throw error;
        break;
      } finally {
        this.energy.states = [];
      }
    }
    this.atOnce = shown === 2;
  }

  /** Runs one sequence of commands against the model, from the set-up balance to a final query. */
  async judge(commands: StateCommand[], registrable: boolean): Promise<Verdict> {
    this.cases++;
    if (this.cases === 1) await this.calibrate();
    const real: Real = { log: [], repeatedLeaseAccepted: false, caseNo: this.cases };
    const cards = Array.from({ length: CARDS }, (): CardState => 'unknown');
    const model: Model = { energy: this.energy, orders: [], cards, cardsRegistrable: registrable, cardsJudged: true };
    try {
      await fc.asyncModelRun(
        async () => {
          await this.setEnergy(
            real,
            SETUP_ENERGY.balance,
            SETUP_ENERGY.costPerTx,
            `setup: ${describeCommand({ op: 'set-energy', ...SETUP_ENERGY })}`,
          );
          return { model, real };
        },
        commands.map((spec) => this.command(spec)),
      );
      // The final state is checked too: a sequence ends with a query (and pins the debits that landed).
      await this.query(real, 'final: query energyMaxCount');
    } catch (error) {
      // After a failure the target is known faulty and what landed is unknown: the next sequence
      // starts from its own balance alone, so that shrinking replays each candidate the same way.
      this.energy.states = [];
      if (error instanceof StepFailure) return error.verdict;
      throw error;
    }
    return real.warning
      ? { ok: true, tag: 'held under another legal reading', warning: real.warning }
      : { ok: true, tag: 'held' };
  }

  private command(spec: StateCommand): fc.AsyncCommand<Model, Real> {
    const label = describeCommand(spec);
    return {
      check: (model) => {
        if (spec.op === 'repeat-callback-id') return model.orders.length > 0;
        // A card is registered only before anything happened to it (a closed card stays closed).
        if (spec.op === 'register-card') return model.cardsRegistrable && model.cards[spec.card] === 'unknown';
        if (spec.op === 'close-card') return model.cardsJudged;
        return true;
      },
      run: (model, real) => this.runCommand(spec, label, model, real),
      toString: () => label,
    };
  }

  private async runCommand(spec: StateCommand, label: string, model: Model, real: Real): Promise<void> {
    switch (spec.op) {
      case 'set-energy':
        return this.setEnergy(real, spec.balance, spec.costPerTx, label);
      case 'query': {
        await this.query(real, label);
        return;
      }
      case 'lease':
        return this.order(
          model,
          real,
          label,
          this.orderPlain(real, 'ENERGY', new LosslessNumber(String(spec.amount)), spec.expiryHours),
          true,
        );
      case 'withdraw':
        return this.order(model, real, label, this.orderPlain(real, 'USDT', new LosslessNumber(spec.amount)), false);
      case 'repeat-callback-id':
        return this.repeat(model, real, label, spec.pick);
      case 'register-card':
        return this.registerCard(model, real, label, spec.card);
      case 'close-card':
        return this.closeCard(model, real, label, spec.card);
    }
  }
}

/**
 * Property 4 (stateful): random sequences of energy settings, queries, energy leases, withdrawals,
 * repeated callBackIds and card closes, run against the target through its control API and checked
 * against a model: energyMaxCount is floor(live balance / cost) (ENERGY-FLOOR), a lease lowers the
 * balance by amount × cost (at once in the model's reading; later or never are legal readings,
 * U-STATES, and warn), a withdrawal does not touch the energy (ORDER-KIND), a repeated callBackId is
 * refused (answered with the first result is the other reading, U-STATES), a registered card
 * closes, and a closed card stays closed (U-STATES). fast-check shrinks a failure to the shortest
 * sequence; the report shows it step by step with the decrypted answers.
 */
export function stateful(env: ServiceEnv, capabilities: Capabilities | undefined): Property<StateCommand[]> {
  const target = env.target;
  const skip = statefulSkip(env, capabilities);
  const registrable = Boolean(capabilities?.routes['POST cards']?.present);
  const run = new StatefulRun(env);
  return {
    id: 'stateful',
    title:
      'Random sequences of energy settings, queries, leases, orders, repeated callBackIds and card closes agree with a model of the service',
    rules: [
      'ENERGY-FLOOR',
      'ENERGY-RES',
      'ORDER-KIND',
      'ORDER-RES',
      'ORDER-CALLBACK-ID',
      'CARD-RES',
      'CARD-ERR',
      'U-STATES',
    ],
    ...(skip ? { skip } : {}),
    arbitrary: commandsFor(env, capabilities),
    examples: hugeEnergyExamples(ordersAllowed(target)),
    show: (commands) => [
      `setup: ${describeCommand({ op: 'set-energy', ...SETUP_ENERGY })}`,
      ...commands.map(describeCommand),
      'final: query energyMaxCount',
    ],
    judge: (commands) => run.judge(commands, registrable),
    async finish() {
      if (!run.touched) return [];
      // Put the energy back as it was before the run (read by the capability probe), where the target lets us read it.
      return restoreControlState(snapshotControlState(capabilities ?? { routes: {} }), new Set(['PUT energy']), target);
    },
  };
}
