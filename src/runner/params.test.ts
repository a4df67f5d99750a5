import { describe, expect, it } from 'vitest';
import { isSchemaName } from '../core/schemas.js';
import { CHECKS, findCheck } from './checks/index.js';
import { ERROR_SCHEMAS } from './checks/error-body.js';
import { RESULT_SCHEMAS } from './checks/result.js';
import { expectationProblem, paramsProblem } from './params.js';
import type { Step } from './suite.js';

const check = (id: string) => findCheck(id)!;

describe("paramsProblem: an expectation's parameters against its check's schema", () => {
  it.each([
    ['status', { equals: 401 }],
    ['error-body', { schema: 'UnauthorizedError' }],
    ['envelope', {}],
    ['envelope', { outcome: 'failure' }],
    ['refused', {}],
    ['result', { schema: 'OrderResult', echo: { id: 'callBackId' }, ifAccepted: true }],
    ['energy-floor', { balance: 1000003, costPerTx: 65000 }],
    ['energy-floor', { balance: [1000000, '870000'], costPerTx: '65000' }],
    ['card-response', { outcome: 'any' }],
    ['callback-decrypts', { fields: { amount: '#decimal:1.5', callBackId: '{{id}}' } }],
    ['callback-attempts', { equals: 4 }],
    ['answers', { status: 200, errCode: 'zero' }],
    ['answers', {}],
    ['processed', { count: 0 }],
    ['processed-exact', {}],
  ])('accepts %s with %j', (id, params) => {
    expect(paramsProblem(check(id), params)).toBeUndefined();
  });

  it.each([
    ['status', { equal: 200 }, 'unknown parameter "equal" (known: equals)', 'equal'],
    ['status', { equals: 200, rule: ['X'] }, 'unknown parameter "rule" (known: equals)', 'rule'],
    ['refused', { outcome: 'failure' }, 'unknown parameter "outcome" (it takes none)', 'outcome'],
    ['status', {}, 'parameter "equals" is missing', undefined],
    ['status', { equals: '401' }, 'parameter "equals" must be an integer, not "401"', 'equals'],
    ['status', { equals: 42 }, 'parameter "equals" must be >= 100, not 42', 'equals'],
    ['processed', { count: -1 }, 'parameter "count" must be >= 0, not -1', 'count'],
    ['processed', { count: '1' }, 'parameter "count" must be an integer, not "1"', 'count'],
    ['callback-attempts', { equals: 2.5 }, 'parameter "equals" must be an integer, not 2.5', 'equals'],
    [
      'error-body',
      { schema: 'Unauthorised' },
      'parameter "schema" must be one of ErrorBody, UnauthorizedError, ForbiddenError, NotFoundError, not "Unauthorised"',
      'schema',
    ],
    [
      'result',
      { schema: 'OrderReply' },
      'parameter "schema" must be one of EnergyMaxCountResult, OrderResult, not "OrderReply"',
      'schema',
    ],
    ['result', { schema: 'OrderResult', echo: { id: 5 } }, 'parameter "echo" at /id must be a string, not 5', 'echo'],
    [
      'result',
      { schema: 'OrderResult', ifAccepted: 'yes' },
      'parameter "ifAccepted" must be a boolean, not "yes"',
      'ifAccepted',
    ],
    ['envelope', { outcome: 'sucess' }, 'parameter "outcome" must be one of success, failure, not "sucess"', 'outcome'],
    ['answers', { errCode: 0 }, 'parameter "errCode" must be one of zero, nonzero, not 0', 'errCode'],
    [
      'energy-floor',
      { balance: 1.5, costPerTx: 1 },
      'parameter "balance" must be an integer, a string or an array, not 1.5',
      'balance',
    ],
    [
      'energy-floor',
      { balance: [1, -2], costPerTx: 1 },
      'parameter "balance" at /1 must be >= 0 or a string, not -2',
      'balance',
    ],
    [
      'energy-floor',
      { balance: 1, costPerTx: 0 },
      'parameter "costPerTx" must be >= 1 or a string, not 0',
      'costPerTx',
    ],
    ['callback-decrypts', { fields: [] }, 'parameter "fields" must be an object, not []', 'fields'],
  ])('refuses %s with %j: %s', (id, params, message, param) => {
    expect(paramsProblem(check(id), params)).toEqual(param === undefined ? { message } : { message, param });
  });

  it('names an unknown parameter before a missing one: a typo is the likely cause of both', () => {
    expect(paramsProblem(check('processed'), { cuont: 1 })?.message).toBe('unknown parameter "cuont" (known: count)');
  });

  it('lists result and error-body schemas that the spec has', () => {
    expect([...ERROR_SCHEMAS, ...RESULT_SCHEMAS].filter((name) => !isSchemaName(name))).toEqual([]);
  });

  it.each(CHECKS.map((c) => [c.id, c] as const))(
    '%s declares an object of exactly its properties, each required one among them',
    (_id, c) => {
      expect([c.params.type, c.params.additionalProperties]).toEqual(['object', false]);
      expect(c.params.required.filter((name) => !(name in c.params.properties))).toEqual([]);
    },
  );
});

describe('expectationProblem: whether an expectation can be judged on its step at all', () => {
  const request: Step = { request: { endpoint: 'energy' } };
  const deliver: Step = { deliver: { type: 1 } };
  const emit: Step = { emit: { type: 1 } };

  it.each([
    [
      'a request check on a request step',
      { check: 'status', equals: 200, rules: ['ENERGY-PATH'], title: 'mine' },
      request,
    ],
    ['a callback check on an emit step', { check: 'callback-headers' }, emit],
    ['a callback check on an await step', { check: 'callback-attempts', equals: 1 }, { await: { type: 3 } } as Step],
    ['an answers check on a deliver step', { check: 'answers', errCode: 'zero' }, deliver],
    ['a probe check on a deliver step', { check: 'processed', count: 1 }, deliver],
  ])('accepts %s', (_label, expectation, step) => {
    expect(expectationProblem(expectation, step)).toBeUndefined();
  });

  it.each([
    [
      'an unknown check',
      { check: 'statuz' },
      request,
      `no check named "statuz" (known: ${CHECKS.map((c) => c.id).join(', ')})`,
    ],
    [
      'a callback check on a request step',
      { check: 'callback-headers' },
      request,
      'it judges received callbacks, which a request step does not produce (emit and await steps do)',
    ],
    [
      'a probe check on an emit step',
      { check: 'processed', count: 1 },
      emit,
      "it judges the probe's processed list, which an emit step does not produce (deliver steps do)",
    ],
    [
      'an answer check on a restart step',
      { check: 'answers' },
      { restart: true } as Step,
      'it judges requests and answers, which a restart step does not produce (request, control, emit, await and deliver steps do)',
    ],
    ['a typo in a parameter', { check: 'status', equal: 200 }, request, 'unknown parameter "equal" (known: equals)'],
  ])('refuses %s', (_label, expectation, step, message) => {
    expect(expectationProblem(expectation, step)?.message).toBe(message);
  });
});
