/**
 * Issue 14's promise: a callback type is one entry in the spec plus one in the callback type table.
 * This test adds a type 8 (an energy refund, two fields of its own) in memory, to a copy of the
 * spec and of the table, and follows it into every product built from them: the validators, the
 * emulator's payload builder, the MSW table, the merchant's idempotency keys, the Pact messages,
 * the docs site and `callback send`'s field list. Nothing is registered globally: each consumer
 * takes the table (and the spec) as a parameter, the built-in ones by default.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { callbackFields } from '../src/cli/callback-fields.js';
import { LosslessNumber, stringifyExact } from '../src/core/exact-json.js';
import { RULES_PATH, SPEC_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { defaultCallbackPayload, newTrackingId } from '../src/emulator/callback-payloads.js';
import type { EmulatorRandom } from '../src/emulator/emulator-context.js';
import { mswEndpointTable } from '../src/generate/codegen/msw-handlers.js';
import { createAjv, generateValidators, schemaBundle } from '../src/generate/codegen/validators.js';
import { generateDocs } from '../src/generate/docs/site.js';
import { buildPactContract } from '../src/generate/pact/contract.js';
import { idempotencyKey, idempotencyKeyOf } from '../src/merchant/idempotency.js';
import { CHECKS } from '../src/runner/checks/index.js';
import { loadSuites } from '../src/runner/suite.js';
import {
  CALLBACK_TYPE_TABLE,
  callbackTypeEntry,
  type CallbackTypeEntry,
  type CallbackTypeTable,
} from '../src/spec/callback-types.js';
import { parseSpec, plainNumbers, type SpecSource } from '../src/spec/document.js';
import { specModel } from '../src/spec/model.js';

const specText = readFileSync(SPEC_PATH, 'utf8');

/** The spec entry of type 8: its payload schema, its branch of the CallbackPayload dispatch, and 8 among the legal `type` values. */
function withType8(text: string): SpecSource {
  const document = parseDocument(text);
  document.setIn(
    ['components', 'schemas', 'LeaseRefundCallback'],
    document.createNode({
      description: 'Type 8 (an energy lease refunded). Idempotent on callBackId.',
      'x-rules': ['CB-ID-OTHER'],
      allOf: [{ $ref: '#/components/schemas/CallbackCommon' }],
      required: ['callBackId', 'energy'],
      properties: {
        type: { const: 8 },
        callBackId: { type: 'string', minLength: 1, 'x-rules': ['CB-ID-OTHER'] },
        energy: { type: 'integer', minimum: 0 },
      },
      examples: [
        {
          type: 8,
          requestUUID: '5f0c2a9e-7d41-4b8e-a3c6-1e9d7b2f0a64',
          trackingId: 'erf-3b7d1e',
          tenantUserId: 'u-20931',
          business: 0,
          callBackId: 'wd-2026-11-23-000046',
          energy: 64000,
        },
      ],
    }),
  );
  document.addIn(
    ['components', 'schemas', 'CallbackPayload', 'allOf'],
    document.createNode({
      if: { properties: { type: { const: 8 } }, required: ['type'] },
      then: { $ref: '#/components/schemas/LeaseRefundCallback' },
    }),
  );
  document.addIn(['components', 'schemas', 'CallbackCommon', 'properties', 'type', 'enum'], 8);
  document.addIn(['components', 'schemas', 'ControlCallbackRequest', 'properties', 'type', 'enum'], 8);
  return parseSpec(document.toString(), 'spec-with-type-8.yaml');
}

/** The table entry of type 8. */
const ENERGY_REFUND: CallbackTypeEntry = {
  type: 8,
  id: 'energyRefund',
  name: 'energy refund',
  schema: 'LeaseRefundCallback',
  fields: ['callBackId', 'energy'],
  key: {
    rule: 'CB-ID-OTHER',
    form: 'value',
    prefix: 'refund',
    fields: ['callBackId'],
    subject: 'an energy refund (CB-ID-OTHER)',
  },
  trackingPrefix: 'erf',
  example: { callBackId: 'wd-2026-11-23-000046', energy: new LosslessNumber('64000') },
};

const spec = withType8(specText);
const table: CallbackTypeTable = [...CALLBACK_TYPE_TABLE, ENERGY_REFUND];

/** A deterministic random source: hex digits counting up. */
function countingRandom(): EmulatorRandom {
  let n = 0;
  const hex = (bytes: number) => Array.from({ length: bytes * 2 }, () => (n++ % 16).toString(16)).join('');
  return { hex, uuid: () => `00000000-0000-4000-8000-${hex(6)}` } as EmulatorRandom;
}

/** The compiled CallbackPayload validator of a spec: what generateValidators compiles, in memory. */
function callbackValidator(source: SpecSource): (data: unknown) => boolean {
  const ajv = createAjv();
  ajv.addSchema(schemaBundle(source));
  return ajv.getSchema('wallet-api#/$defs/CallbackPayload')!;
}

describe('a callback type 8 added in memory (one spec entry, one table entry)', () => {
  it('is in the spec model: the webhook dispatches type 8 to its schema', () => {
    expect(
      specModel(spec)
        .callbackTypes()
        .map(({ type, schema }) => [type, schema]),
    ).toContainEqual([8, 'LeaseRefundCallback']);
    expect(
      specModel(parseSpec(specText))
        .callbackTypes()
        .map(({ type }) => type),
    ).not.toContain(8);
  });

  it('is in the validators generated from that spec: a type-8 payload passes, one without its fields fails', () => {
    const [file] = generateValidators(spec);
    expect(file!.contents).toContain('"LeaseRefundCallback"');
    const validate = callbackValidator(spec);
    const payload = { type: 8, requestUUID: 'r-1', trackingId: 'erf-1', callBackId: 'wd-1', energy: 64000 };
    expect(validate(payload)).toBe(true);
    expect(validate({ ...payload, energy: undefined })).toBe(false);
    // Under the spec as shipped, 8 is no callback type at all.
    expect(callbackValidator(parseSpec(specText))(payload)).toBe(false);
  });

  it("is built by the emulator's payload builder from the table, and the result validates", () => {
    const random = countingRandom();
    const trackingId = newTrackingId(8, random, table);
    expect(trackingId).toMatch(/^erf-[0-9a-f]{16}$/);
    const payload = defaultCallbackPayload(8, trackingId, random, table);
    expect(Object.keys(payload)).toEqual(['type', 'trackingId', 'tenantUserId', 'business', 'callBackId', 'energy']);
    expect(payload.callBackId).toMatch(/^cb-[0-9a-f]{16}$/);
    expect(stringifyExact(payload.energy)).toBe('64000');
    expect(callbackValidator(spec)(plainNumbers({ ...payload, requestUUID: 'r-1' }))).toBe(true);
    // The built-in table does not know type 8: the builder falls back to an order-like event.
    expect(Object.keys(defaultCallbackPayload(8, trackingId, countingRandom()))).not.toContain('energy');
  });

  it('leaves the MSW endpoint table as it is: callbacks are webhooks, not endpoints the handlers serve', () => {
    expect(mswEndpointTable(spec)).toEqual(mswEndpointTable(parseSpec(specText)));
  });

  it("gets the merchant's idempotency key its table entry names", () => {
    const payload = {
      type: new LosslessNumber('8'),
      requestUUID: 'r-1',
      trackingId: 'erf-1',
      callBackId: 'wd-9',
      energy: new LosslessNumber('64000'),
    };
    expect(idempotencyKeyOf(table)(payload)).toBe('refund:wd-9');
    expect(idempotencyKeyOf(table)({ ...payload, requestUUID: 'r-2', trackingId: 'erf-2' })).toBe('refund:wd-9');
    expect(() => idempotencyKeyOf(table)({ ...payload, callBackId: '' })).toThrow(
      'an energy refund (CB-ID-OTHER) needs callBackId for its idempotency key',
    );
    // The built-in table keys an unknown type as any other event (CB-ID-OTHER).
    expect(idempotencyKey(payload)).toBe('event:8:["erf-1","wd-9"]');
    // The built-in types keep their keys under the extended table.
    const deposit = { type: 1, txid: 'ab', chain: 'TRON', symbol: 'USDT', toAddress: 'T1', trackingId: 'dep-1' };
    expect(idempotencyKeyOf(table)(deposit)).toBe(idempotencyKey(deposit));
  });

  it('becomes a Pact message titled by the table, carrying the spec example', () => {
    const message = buildPactContract(spec, { callbackTypes: table }).messages.find(
      (candidate) => candidate.type === 8,
    );
    expect(message).toMatchObject({
      id: 'callback-8',
      description: 'callback type 8 (energy refund)',
      schema: 'LeaseRefundCallback',
    });
    expect(message!.states[0]!.name).toMatch(
      /^the service has a energy refund event \(callback type 8\) for merchant \d+$/,
    );
    expect(stringifyExact(message!.plain)).toContain('"callBackId":"wd-2026-11-23-000046","energy":64000');
    expect(message!.content).toMatchObject({ callBackId: 'wd-2026-11-23-000046', energy: 64000 });
    // Without the table entry the message still exists (the spec has the type) but has no name.
    expect(buildPactContract(spec).messages.find((candidate) => candidate.type === 8)!.description).toBe(
      'callback type 8 (type 8)',
    );
  });

  it('gets a docs page, a row in the callback and idempotency tables, and the merchant key of its example', () => {
    const key = parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' }) as RsaPrivateKey;
    const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
    const files = new Map(
      generateDocs(spec, rules, loadSuites(), {
        checks: CHECKS,
        demo: { key },
        callbackTypes: table,
        idempotencyKey: idempotencyKeyOf(table),
      }).map((file) => [file.path, file.contents]),
    );
    const page = files.get('callback-8-energy-refund.md');
    expect(page).toContain('# Callback type 8: Energy refund');
    expect(page).toContain('LeaseRefundCallback');
    expect(page).toContain('`energy`');
    expect(page).toContain('`refund:wd-2026-11-23-000046`');
    expect(files.get('index.md')).toContain('Energy refund');
    expect(files.get('idempotency.md')).toContain('refund:wd-2026-11-23-000046');
    expect(files.get('callback-7-not-enough-hot-money.md')).toContain('8 Energy refund');
    // The name is the table's: without the entry the page is named after the schema.
    const untabled = generateDocs(spec, rules, loadSuites(), { checks: CHECKS, demo: { key } }).map(
      (file) => file.path,
    );
    expect(untabled).toContain('callback-8-lease-refund.md');
    expect(untabled).not.toContain('callback-8-energy-refund.md');
  });

  it("is a field of `callback send`'s type 8", () => {
    expect([...callbackFields(spec, 8)]).toEqual([
      'type',
      'requestUUID',
      'trackingId',
      'tenantUserId',
      'business',
      'callBackId',
      'energy',
    ]);
    expect(callbackTypeEntry(8, table)).toBe(ENERGY_REFUND);
    expect(callbackTypeEntry(8)).toBeUndefined();
  });
});
