import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../../platform/package-paths.js';
import { parseRuleCatalog } from '../../core/rules.js';
import type { Case, Expectation } from '../model.js';
import { derivedSuites } from './index.js';

const catalog = new Map(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => [rule.id, rule]));
const suites = derivedSuites().filter((suite) => suite.side === 'service');
const cases = suites.flatMap((suite) => suite.cases.map((c) => ({ suite: suite.name, case: c })));
const expectations = (c: Case): Expectation[] => c.steps.flatMap((step) => step.expect ?? []);
const suite = (name: string) => suites.find((one) => one.name === `service/derived/${name}`)!;

describe('the service side of the derived cases (spec/dimensions.yaml)', () => {
  it('makes one suite per service row, each case with a unique id, every rule named one of the catalogue', () => {
    expect(suites.map((one) => one.name)).toEqual([
      'service/derived/order-key-near-misses',
      'service/derived/form-media-type-near-misses',
      'service/derived/order-id-echo',
      'service/derived/order-field-values',
      'service/derived/energy-field-values',
      'service/derived/energy-floor-edges',
      'service/derived/request-block-edges',
      'service/derived/answer-block-edges',
    ]);
    for (const one of suites) expect(new Set(one.cases.map((c) => c.id)).size, one.name).toBe(one.cases.length);
    const named = cases.flatMap(({ case: c }) => [...c.rules, ...expectations(c).flatMap((e) => e.rules ?? [])]);
    expect(named.filter((rule) => !catalog.has(rule))).toEqual([]);
  });

  it('sends an order only with --user-id and --allow-orders, and sets energy only with the control API', () => {
    for (const { suite: name, case: c } of cases) {
      const orders = c.steps.some((step) => step.request?.endpoint === 'order');
      if (orders) expect(c.needs, `${name}/${c.id}`).toEqual(expect.arrayContaining(['userId', 'orders']));
      if (c.steps.some((step) => step.control)) expect(c.needs, `${name}/${c.id}`).toContain('control');
    }
  });

  it('labels with an open point only what a legal reading may answer otherwise: the order endpoint status and body, a refused callBackId, a lease debited later, an order field past a bound or truncated by a binder', () => {
    const open = cases.flatMap(({ suite: name, case: c }) =>
      expectations(c)
        .filter((e) => (e.rules ?? []).some((rule) => rule.startsWith('U-')))
        .map((e) => `${name.split('/').at(-1)}:${e.check}:${(e.rules ?? []).join(',')}`),
    );
    expect([...new Set(open)].sort()).toEqual([
      'answer-block-edges:envelope:U-LIMITS',
      'energy-floor-edges:energy-floor:U-STATES',
      'order-field-values:refused:U-CODES',
      'order-field-values:refused:U-LIMITS',
      'order-id-echo:envelope:U-LIMITS',
      'order-key-near-misses:error-body:U-CODES',
      'order-key-near-misses:status:U-CODES',
    ]);
  });

  it('sets energy edges a float division gets wrong beyond 2^53, and fractions a rounding gets wrong', () => {
    const floors = suite('energy-floor-edges').cases.map((c) => {
      const last = expectations(c).at(-1)!;
      const [balance, cost] = [BigInt(String(last.balance)), BigInt(String(last.costPerTx))];
      return {
        id: c.id,
        floor: balance / cost,
        float: Math.floor(Number(balance) / Number(cost)),
        round: Math.round(Number(balance) / Number(cost)),
      };
    });
    const by = (id: string) => floors.find((one) => one.id === `energy-${id}`)!;
    for (const id of ['balance-beyond-2-53', 'quotient-beyond-2-53'])
      expect(BigInt(by(id).float), id).not.toBe(by(id).floor);
    for (const id of ['fraction-half', 'fraction-above-half']) expect(BigInt(by(id).round), id).not.toBe(by(id).floor);
    expect(by('zero-balance').floor).toBe(0n);
  });

  it('reads every energy edge after a change of state: two settings and two reads per case, the cost changed', () => {
    for (const c of suite('energy-floor-edges').cases.filter((one) => one.id !== 'energy-after-lease')) {
      const reads = expectations(c).filter((e) => e.check === 'energy-floor');
      expect(reads, c.id).toHaveLength(2);
      expect(reads[0], c.id).not.toEqual(reads[1]);
    }
  });

  it('reads the energy after a lease as untouched or debited by transactions x cost, a floor no other debit reaches', () => {
    const lease = suite('energy-floor-edges').cases.find((one) => one.id === 'energy-after-lease')!;
    const order = lease.steps.find((step) => step.request?.endpoint === 'order')!.request!.plain as Record<
      string,
      unknown
    >;
    expect(order).toMatchObject({ symbol: 'ENERGY', expiryHours: 24 });
    const [, afterLease, atOnce] = expectations(lease).filter((e) => e.check === 'energy-floor');
    const cost = BigInt(String(afterLease!.costPerTx));
    const [balance, debited] = (afterLease!.balance as string[]).map(BigInt) as [bigint, bigint];
    const transactions = BigInt(Number(order.amount));
    expect(balance - debited).toBe(transactions * cost);
    expect(cost).not.toBe(1n);
    expect(atOnce).toMatchObject({ balance: String(debited), rules: ['U-STATES'] });
    // Debits a faulty service might take: the amount alone, the amount over the cost, one transaction's cost.
    const legal = new Set([balance / cost, debited / cost]);
    for (const wrong of [transactions, transactions / cost, cost])
      expect(legal.has((balance - wrong) / cost), String(wrong)).toBe(false);
  });

  it('keeps each callBackId value class fresh per case: a template in every one', () => {
    for (const c of suite('order-id-echo').cases) {
      const callBackId = String((c.steps[0]!.request!.plain as Record<string, unknown>).callBackId);
      expect(callBackId, c.id).toMatch(/\{\{(id|digits:\d+)\}\}/);
    }
  });

  it('varies one field of a valid order per case: the rest is the valid withdrawal or lease, and only bounds and a binder truncation warn', () => {
    const fields = suite('order-field-values').cases.map((c) => {
      const order = c.steps.find((step) => step.request?.endpoint === 'order')!;
      const plain = order.request!.plain as Record<string, unknown>;
      const lease = plain.symbol === 'ENERGY';
      const valid: Record<string, unknown> = lease
        ? { userId: '{{userId}}', tenantUserId: '20931', tenantType: 1, symbol: 'ENERGY', amount: 2, expiryHours: 24 }
        : {
            userId: '{{userId}}',
            tenantUserId: '20931',
            tenantType: 1,
            symbol: 'USDT',
            amount: '#decimal:123456789012.123456',
          };
      valid.chainName = 'TRON';
      valid.toAddr = 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE';
      valid.callBackId = '{{id}}';
      const changed = Object.keys(valid).filter(
        (field) => JSON.stringify(plain[field]) !== JSON.stringify(valid[field]),
      );
      expect(changed, c.id).toHaveLength(1);
      // A lease case sets enough energy first, so a service that takes the value cannot refuse for want of it.
      if (lease) expect(c.steps[0]!.control, c.id).toBeDefined();
      const rules = order.expect!.map((e) => (e.rules ?? []).join(','));
      return { id: c.id, field: changed[0], rules: rules.join(';') };
    });
    const warn = fields.filter((one) => one.rules.startsWith('U-')).map((one) => one.id);
    expect(warn.sort()).toEqual(
      [
        'order-amount-negative',
        'order-amount-zero',
        'order-expiry-fraction',
        'order-expiry-negative',
        'order-expiry-zero',
        'order-lease-amount-negative',
        'order-lease-amount-zero',
      ].sort(),
    );
    expect(new Set(fields.map((one) => one.field))).toEqual(
      new Set(['tenantType', 'userId', 'tenantUserId', 'toAddr', 'chainName', 'amount', 'expiryHours']),
    );
    const wraps = suite('order-field-values').cases.find((c) => c.id === 'order-tenant-type-wraps-to-one')!;
    const tenantType = (wraps.steps[0]!.request!.plain as { tenantType: number }).tenantType;
    // Kept in 32 bits (two's complement), the value reads as the one allowed value.
    expect(Number(BigInt.asIntN(32, BigInt(tenantType)))).toBe(1);
  });

  it('sends each near miss of the form type with the whole valid form, on both form endpoints, and no type the form check takes', () => {
    const near = suite('form-media-type-near-misses').cases;
    expect(near.map((c) => c.steps[0]!.request!.endpoint).sort()).toEqual(
      [...Array(near.length / 2).fill('energy'), ...Array(near.length / 2).fill('order')].sort(),
    );
    for (const c of near) {
      const request = c.steps[0]!.request!;
      expect(request.plain, c.id).toBeDefined();
      expect(request.encode, c.id).toBeUndefined();
      const media = (request.contentType ?? 'multipart/form-data').split(';')[0]!.trim().toLowerCase();
      expect(media, c.id).not.toBe('application/x-www-form-urlencoded');
      // A check by prefix or by substring takes at least one of them; the multipart one is a whole other form.
    }
    const types = near.map((c) => c.steps[0]!.request!.contentType ?? '');
    expect(types.some((type) => type.startsWith('application/x-www-form-urlencoded'))).toBe(true);
    expect(types.some((type) => !type.startsWith('application/') && type.includes('x-www-form-urlencoded'))).toBe(true);
    expect(near.filter((c) => c.steps[0]!.request!.form === 'multipart')).toHaveLength(2);
  });

  it('sends each energy field value in an otherwise valid query, never another symbol (ENERGY-REQ lets a service take one)', () => {
    for (const c of suite('energy-field-values').cases) {
      const plain = c.steps[0]!.request!.plain as Record<string, unknown>;
      const changed = ['symbol', 'chainName'].filter(
        (field) => plain[field] !== (field === 'symbol' ? 'ENERGY' : 'TRON'),
      );
      expect(changed, c.id).toHaveLength(1);
      expect(typeof plain[changed[0]!], c.id).not.toBe('string');
      expect(c.rules, c.id).toEqual(['ENERGY-REQ']);
    }
  });
});
