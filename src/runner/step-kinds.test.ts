import { describe, expect, it } from 'vitest';
import { merchantTarget, serviceTarget, testKeys } from '../../test/support/check-context.js';
import { producedBy, routesOfStep, runStep, STEP_KINDS, stepKindOf, stepNeedsReceiver, type CaseState } from './step-kinds.js';
import type { Step } from './suite.js';

const state = (): CaseState => ({
  scope: { caseId: 'c', saved: {} }, stranger: { privateKey: testKeys, publicKey: testKeys.publicKey }, receiver: undefined,
  spelling: 'interface', events: new Map(), caseEvents: new Set(), lastProbe: undefined, prompt: () => undefined,
});

describe('the step-kind registry: one entry per kind', () => {
  it('lists the six kinds of suite.schema.json, in the order a step\'s keys are tried', () => {
    expect(Object.keys(STEP_KINDS)).toEqual(['request', 'control', 'emit', 'await', 'deliver', 'restart']);
    expect(Object.entries(STEP_KINDS).map(([kind, entry]) => `${kind}:${entry.side}`)).toEqual(['request:service', 'control:service', 'emit:service', 'await:service', 'deliver:merchant', 'restart:merchant']);
  });

  it.each<[string, Step, string | undefined, string[], boolean, string[]]>([
    ['a request', { request: { endpoint: 'energy' } }, 'request', [], false, ['exchange']],
    ['an energy setting', { control: { energy: { balance: 1, costPerTx: 1 } } }, 'control', ['PUT energy'], false, ['exchange']],
    ['a card registration', { control: { card: { powerCardId: 'p', merchantUserId: 'm' } } }, 'control', ['POST cards'], false, ['exchange']],
    ['pointing callbacks at the runner', { control: { pointCallbacks: true } }, 'control', ['PUT callback-url'], true, ['exchange']],
    ['an emitted callback', { emit: { type: 1 } }, 'emit', ['PUT callback-url', 'POST callbacks', 'GET deliveries'], true, ['exchange', 'callbacks']],
    ['an awaited callback', { await: { type: 3 } }, 'await', [], true, ['exchange', 'callbacks']],
    ['a delivery', { deliver: { type: 1 } }, 'deliver', [], false, ['exchange', 'probe']],
    ['a restart', { restart: true }, 'restart', [], false, []],
    ['a step of no kind', { title: 'nothing' }, undefined, [], false, []],
  ])('knows %s: its kind, control routes, receiver and what it produces', (_label, step, kind, routes, receiver, produces) => {
    expect([stepKindOf(step), routesOfStep(step), stepNeedsReceiver(step), producedBy(step)]).toEqual([kind, routes, receiver, produces]);
  });

  it.each<[string, Step, typeof serviceTarget | typeof merchantTarget]>([
    ['a delivery against a service', { deliver: { type: 1 } }, serviceTarget],
    ['a request against a merchant', { request: { endpoint: 'energy' } }, merchantTarget],
    ['an emitted callback without the runner\'s receiver', { emit: { type: 1 } }, serviceTarget],
    ['pointing callbacks without the runner\'s receiver', { control: { pointCallbacks: true } }, serviceTarget],
    ['a step of no kind', {}, serviceTarget],
  ])('refuses to run %s, as a suite error, without touching the target', async (_label, step, target) => {
    expect(await runStep(step, target, state())).toEqual({ exchanges: [], error: `suite error: this step does not apply to a ${target.side}` });
  });
});
