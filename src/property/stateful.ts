import fc from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import { restoreControlState, runControl, runRequest, snapshotControlState, type Capabilities, type Exchange } from '../runner/api.js';
import { energyLeased, energyObserved, energyReadings, energySet, unknownEnergy, type EnergyKnowledge } from './energy-model.js';
import type { Property, Verdict, Warning } from './property.js';
import { asSent, judgeValidAnswer, ordersAllowed, readEnvelope, seal, sendData, type ServiceEnv } from './service-exchange.js';
import { CARDS, commandsFor, describeCommand, hugeEnergyExamples, SETUP_ENERGY, type StateCommand } from './stateful-commands.js';

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

const preview = (text: string | undefined, max = 300) => (text === undefined ? undefined : text.length > max ? `${text.slice(0, max)}…` : text);

function logExchange(real: Real, command: string, exchange: Exchange, expected?: string): LogEntry {
  const response = exchange.response;
  const entry: LogEntry = {
    step: real.log.length,
    command,
    ...(exchange.request.plain ? { request: exchange.request.plain } : exchange.request.body ? { request: preview(exchange.request.body)! } : {}),
    status: response ? response.status : (exchange.error ?? 'no answer'),
    ...(response ? { answer: response.decrypted ? `${preview(response.body, 120)} → data ${response.decrypted.text}` : preview(response.body)! } : {}),
    ...(expected ? { expected } : {}),
  };
  real.log.push(entry);
  return entry;
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
  // The energy model lives across sequences: a debit of an earlier sequence may still land (U-STATES).
  const energy = unknownEnergy();
  /**
   * Whether the service debits a lease at once, as the calibration showed (twice: a clean query, a
   * lease of one transaction, one transaction less at the next query). Then the model is exact:
   * any energyMaxCount that no order of debits explains fails. Otherwise (a lease lands later or
   * never, U-STATES), a lease of this property, or one made before it (by the suites, another
   * property), may land at any time, and only the bound holds: debits never raise energyMaxCount
   * above floor(balance set last / cost), nor above its value at the previous query.
   */
  let atOnce = false;
  let ceiling = 0n;
  const floorOfSet = () => energy.balance / energy.cost;
  let touched = false;
  let cases = 0;

  const fail = (real: Real, message: string, rules: string[], exchange?: Exchange): never => {
    throw new StepFailure({
      ok: false,
      message: `${message} [step ${real.log.length - 1} of the sequence]`,
      rules,
      evidence: {
        sequence: real.log,
        ...(exchange
          ? { exchanges: [{ request: exchange.request, response: exchange.response ?? null, ...(exchange.error ? { error: exchange.error } : {}) }] }
          : {}),
      },
    });
  };
  const warn = (real: Real, message: string, rules: string[]) => {
    real.warning ??= { message: `${message} [step ${real.log.length - 1}]`, rules, evidence: { sequence: [...real.log] } };
  };

  /**
   * Whether the answer is a success (envelope code 0): false for a refusal (an HTTP 4xx, or a
   * non-zero code with an error text); anything else fails the step under `resultRule` or the
   * envelope's rules.
   */
  function succeeded(real: Real, exchange: Exchange, resultRule: string): boolean {
    const read = readEnvelope(exchange, [resultRule, 'ENV-CODE']);
    if ('ok' in read) fail(real, read.ok ? 'unreadable answer' : read.message, read.ok ? [resultRule] : read.rules, exchange);
    if ('refusedHttp' in read) return false;
    const { envelope, code } = read as { envelope: Record<string, unknown>; code: string };
    if (code === '0') return true;
    if (typeof envelope.message !== 'string' || envelope.message === '')
      fail(real, `refusal code ${code} without an error text in message`, ['ENV-MSG'], exchange);
    return false;
  }

  async function setEnergy(real: Real, balance: number | string, costPerTx: number | string, label: string): Promise<void> {
    // Exact numbers on the wire (runControl writes the body with stringifyExact): a balance past 2^53 keeps its digits.
    const exact = (value: number | string) => new LosslessNumber(String(value)) as unknown as number;
    const exchange = await runControl({ energy: { balance: exact(balance), costPerTx: exact(costPerTx) } }, target);
    touched = true;
    logExchange(real, label, exchange);
    const status = exchange.response?.status ?? 0;
    if (status >= 400 && status < 500 && status !== 401 && status !== 403 && (BigInt(balance) > MAX_SAFE || BigInt(costPerTx) > MAX_SAFE)) {
      // U-LIMITS: a service may refuse a balance it cannot hold; the energy stays as it was, and the model with it.
      real.log[real.log.length - 1]!.expected = 'set, or refused (U-LIMITS: a balance past 2^53)';
      return;
    }
    if (exchange.error || !exchange.response) {
      // The control API is the toolkit's lever, not the interface: without it nothing can be judged.
      throw new Error(`the control API did not set the energy: ${exchange.error ?? 'no answer'}`);
    }
    energySet(energy, BigInt(balance), BigInt(costPerTx));
    ceiling = floorOfSet();
  }

  async function query(real: Real, label: string): Promise<bigint | undefined> {
    const text = stringifyExact({ symbol: 'ENERGY', chainName: 'TRON' });
    const exchange = await sendData(env, 'energy', seal(env, text), text);
    const { own, low, high } = energyReadings(energy);
    const legal = low === high ? own : `${own} (the model's reading; a later debit: ${low} to ${high})`;
    logExchange(real, label, exchange, legal);
    if (!succeeded(real, exchange, 'ENERGY-RES')) return;
    const decrypted = exchange.response!.decrypted;
    if (!decrypted)
      fail(
        real,
        exchange.response!.decryptError ? `success whose data does not decrypt: ${exchange.response!.decryptError}` : 'success without data',
        ['ENERGY-RES', 'CRYPTO-ENVELOPE'],
        exchange,
      );
    const issues = validateSchema('EnergyMaxCountResult', decrypted!.value);
    if (issues.length > 0)
      fail(
        real,
        `success whose decrypted result breaks EnergyMaxCountResult: ${issues
          .slice(0, 3)
          .map((issue) => issue.message)
          .join('; ')}`,
        [...new Set(issues.flatMap((issue) => issue.rules))],
        exchange,
      );
    const got = BigInt((decrypted!.value as Record<string, LosslessNumber>).energyMaxCount!.value);
    if (!atOnce) {
      // A service that does not debit at once (or whose reading is not known): a lease of this property, or one made before it
      // (by the suites, another property), may land at any time. What still holds: debits only lower the balance set last.
      if (got > ceiling)
        fail(
          real,
          `energyMaxCount ${got} is above ${ceiling}, ${ceiling === floorOfSet() ? `floor(${energy.balance} / ${energy.cost}) of the balance set last` : 'its value at the last query'}: without a new balance, debits only lower it`,
          ['ENERGY-FLOOR'],
          exchange,
        );
      ceiling = got;
      energy.states = [];
      if (got.toString() !== own)
        warn(
          real,
          `energyMaxCount ${got}, not ${own} (every accepted lease debited at once, the model's reading): a lease debited later or never, a legal reading of when a lease lowers the energy`,
          ['U-STATES'],
        );
      return got;
    }
    if (!energyObserved(energy, got)) {
      const repeated = real.repeatedLeaseAccepted
        ? '; an energy lease with a repeated callBackId was accepted before: was it debited again? (ORDER-CALLBACK-ID)'
        : '';
      fail(
        real,
        `energyMaxCount ${got} is no legal reading of the live balance: expected ${own} = floor((${energy.balance} - debits since it was set) / ${energy.cost}) with every accepted lease debited${low === high ? '' : ` (debits landing later, in order, would give other values from ${low} to ${high}, not this one)`}${repeated}`,
        real.repeatedLeaseAccepted ? ['ENERGY-FLOOR', 'ORDER-CALLBACK-ID'] : ['ENERGY-FLOOR'],
        exchange,
      );
    }
    if (got.toString() !== own)
      warn(
        real,
        `energyMaxCount ${got}, not ${own} (every accepted lease debited at once, the model's reading): a lease debited later or never, a legal reading of when a lease lowers the energy`,
        ['U-STATES'],
      );
    return got;
  }

  function orderPlain(real: Real, symbol: string, amount: ExactJson, expiryHours?: number): Record<string, ExactJson> {
    return {
      userId: new LosslessNumber(String(target.userId)),
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

  async function order(model: Model, real: Real, label: string, plain: Record<string, ExactJson>, lease: boolean): Promise<void> {
    const sent = asSent(env, { endpoint: 'order', plain });
    const text = stringifyExact(sent);
    const exchange = await sendData(env, 'order', seal(env, text), text);
    logExchange(real, label, exchange, lease ? 'accepted (then debited) or refused' : 'accepted or refused; the energy unchanged');
    const verdict = judgeValidAnswer(exchange, { endpoint: 'order', plain }, sent);
    if (!verdict.ok) fail(real, verdict.message, verdict.rules, exchange);
    if ((verdict as { tag?: string }).tag !== 'accepted') return;
    model.orders.push({ sent, lease });
    if (lease) energyLeased(energy, BigInt(String(plain.amount)) * energy.cost);
  }

  async function repeat(model: Model, real: Real, label: string, pick: number): Promise<void> {
    const first = model.orders[pick % model.orders.length]!;
    const text = stringifyExact(first.sent);
    const exchange = await sendData(env, 'order', seal(env, text), text);
    logExchange(real, label, exchange, 'refused (or the first result again, U-STATES)');
    if (!succeeded(real, exchange, 'ORDER-RES')) return;
    // The other reading: the first order's result again. It must still be a valid result for this callBackId.
    const verdict = judgeValidAnswer(exchange, { endpoint: 'order', plain: first.sent }, first.sent);
    if (!verdict.ok) fail(real, `a repeated callBackId answered as a success with a wrong result: ${verdict.message}`, verdict.rules, exchange);
    if (first.lease) real.repeatedLeaseAccepted = true;
    warn(
      real,
      `an order repeating the callBackId ${stringifyExact(first.sent.callBackId ?? null)} was answered as a success (the first order's result again), not refused: the merchant keeps callBackIds unique (ORDER-CALLBACK-ID), and how a service answers a repeat is open`,
      ['U-STATES'],
    );
  }

  async function registerCard(model: Model, real: Real, label: string, card: number): Promise<void> {
    const exchange = await runControl({ card: { powerCardId: cardId(real, card), merchantUserId: 'u-20931' } }, target);
    logExchange(real, label, exchange);
    if (exchange.error || !exchange.response) throw new Error(`the control API did not register the card: ${exchange.error ?? 'no answer'}`);
    model.cards[card] = 'open';
  }

  const cardId = (real: Real, card: number) => `pc-${env.tag}-${real.caseNo}-${card}`;

  async function closeCard(model: Model, real: Real, label: string, card: number): Promise<void> {
    const state = model.cards[card]!;
    const json = {
      merchantId: String(target.userId),
      merchantUserId: 'u-20931',
      powerCardId: cardId(real, card),
      channel: 'APP',
      closeSerialNo: `cls-${env.tag}-${real.caseNo}-${real.log.length}`,
    };
    const exchange = await runRequest({ endpoint: 'card', json }, target, { caseId: 'generated', saved: {} }, env.stranger);
    logExchange(
      real,
      label,
      exchange,
      state === 'open'
        ? 'success (a registered open card)'
        : state === 'closed'
          ? 'refused (a closed card stays closed)'
          : 'success or refused (an unknown card, U-STATES)',
    );
    const response = exchange.response;
    if (!response) fail(real, `card close got no answer: ${exchange.error ?? 'the connection ended'}`, ['CARD-RES'], exchange);
    if (response!.status === 401 || response!.status === 403) {
      // U-CARD-AUTH: the toolkit sends no credential; nothing about the close can be judged.
      model.cardsJudged = false;
      return;
    }
    if (response!.json === undefined) fail(real, `card close answered HTTP ${response!.status} with a body that is not JSON`, ['CARD-RES'], exchange);
    const issues = validateSchema('CardCloseResponse', response!.json);
    const success = (response!.json as { success?: unknown }).success;
    if (issues.length > 0)
      fail(
        real,
        `card close answered HTTP ${response!.status} outside the response shape: ${issues
          .slice(0, 3)
          .map((issue) => issue.message)
          .join('; ')}`,
        success === false ? ['CARD-ERR'] : ['CARD-RES'],
        exchange,
      );
    if (state === 'open' && success !== true) fail(real, 'closing a registered open card was refused', ['CARD-RES'], exchange);
    if (state === 'closed' && success === true)
      warn(real, `card #${card} was closed a second time: a closed card stays closed (how a service answers is open)`, ['U-STATES']);
    if (success === true) model.cards[card] = 'closed';
  }

  /**
   * Before the first sequence: a clean query, a lease of one transaction and a query, twice, show
   * whether the service debits at once (and the exact model applies). A failure here is left to
   * the generated sequences to find and report.
   */
  async function calibrate(): Promise<void> {
    if (!ordersAllowed(target)) return;
    let shown = 0;
    for (let round = 0; round < 2; round++) {
      const real: Real = { log: [], repeatedLeaseAccepted: false, caseNo: -round };
      const model: Model = { energy, orders: [], cards: [], cardsRegistrable: false, cardsJudged: false };
      try {
        await setEnergy(real, SETUP_ENERGY.balance, SETUP_ENERGY.costPerTx, 'calibration: set energy');
        const clean = floorOfSet();
        const before = await query(real, 'calibration: query energyMaxCount');
        await order(model, real, 'calibration: lease 1 transaction', orderPlain(real, 'ENERGY', new LosslessNumber('1'), 1), true);
        const after = model.orders.length === 1 ? await query(real, 'calibration: query energyMaxCount') : undefined;
        if (before !== clean || after !== clean - 1n) break;
        shown++;
      } catch (error) {
        if (!(error instanceof StepFailure)) throw error;
        break;
      } finally {
        energy.states = [];
      }
    }
    atOnce = shown === 2;
  }

  function command(spec: StateCommand): fc.AsyncCommand<Model, Real> {
    const label = describeCommand(spec);
    return {
      check: (model) => {
        if (spec.op === 'repeat-callback-id') return model.orders.length > 0;
        // A card is registered only before anything happened to it (a closed card stays closed).
        if (spec.op === 'register-card') return model.cardsRegistrable && model.cards[spec.card] === 'unknown';
        if (spec.op === 'close-card') return model.cardsJudged;
        return true;
      },
      async run(model, real) {
        switch (spec.op) {
          case 'set-energy':
            return setEnergy(real, spec.balance, spec.costPerTx, label);
          case 'query': {
            await query(real, label);
            return;
          }
          case 'lease':
            return order(model, real, label, orderPlain(real, 'ENERGY', new LosslessNumber(String(spec.amount)), spec.expiryHours), true);
          case 'withdraw':
            return order(model, real, label, orderPlain(real, 'USDT', new LosslessNumber(spec.amount)), false);
          case 'repeat-callback-id':
            return repeat(model, real, label, spec.pick);
          case 'register-card':
            return registerCard(model, real, label, spec.card);
          case 'close-card':
            return closeCard(model, real, label, spec.card);
        }
      },
      toString: () => label,
    };
  }

  return {
    id: 'stateful',
    title: 'Random sequences of energy settings, queries, leases, orders, repeated callBackIds and card closes agree with a model of the service',
    rules: ['ENERGY-FLOOR', 'ENERGY-RES', 'ORDER-KIND', 'ORDER-RES', 'ORDER-CALLBACK-ID', 'CARD-RES', 'CARD-ERR', 'U-STATES'],
    ...(skip ? { skip } : {}),
    arbitrary: commandsFor(env, capabilities),
    examples: hugeEnergyExamples(ordersAllowed(target)),
    show: (commands) => [`setup: ${describeCommand({ op: 'set-energy', ...SETUP_ENERGY })}`, ...commands.map(describeCommand), 'final: query energyMaxCount'],
    async judge(commands) {
      cases++;
      if (cases === 1) await calibrate();
      const real: Real = { log: [], repeatedLeaseAccepted: false, caseNo: cases };
      const model: Model = { energy, orders: [], cards: Array.from({ length: CARDS }, () => 'unknown'), cardsRegistrable: registrable, cardsJudged: true };
      try {
        await fc.asyncModelRun(async () => {
          await setEnergy(real, SETUP_ENERGY.balance, SETUP_ENERGY.costPerTx, `setup: ${describeCommand({ op: 'set-energy', ...SETUP_ENERGY })}`);
          return { model, real };
        }, commands.map(command));
        // The final state is checked too: a sequence ends with a query (and pins the debits that landed).
        await query(real, 'final: query energyMaxCount');
      } catch (error) {
        // After a failure the target is known faulty and what landed is unknown: the next sequence
        // starts from its own balance alone, so that shrinking replays each candidate the same way.
        energy.states = [];
        if (error instanceof StepFailure) return error.verdict;
        throw error;
      }
      return real.warning ? { ok: true, tag: 'held under another legal reading', warning: real.warning } : { ok: true, tag: 'held' };
    },
    async finish() {
      if (!touched) return [];
      // Put the energy back as it was before the run (read by the capability probe), where the target lets us read it.
      return restoreControlState(snapshotControlState(capabilities ?? { routes: {} }), new Set(['PUT energy']), target);
    },
  };
}
