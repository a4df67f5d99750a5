import { describe, expect, it } from 'vitest';
import { SpecError } from '../core/errors.js';
import { LosslessNumber } from '../core/exact-json.js';
import { parseSpec, ruleIndex } from './document.js';
import { specModel } from './model.js';
import { packagedSpec } from './packaged.js';

const MINI = `openapi: 3.1.0
info: {title: t, version: '1'}
servers: [{url: '{base_url}'}]
paths:
  /a:
    post:
      operationId: a
      x-rules: [A-RULE]
      requestBody: {$ref: '#/components/requestBodies/Body'}
  /b:
    get: {operationId: b, tags: [control]}
components:
  requestBodies:
    Body:
      content: {application/json: {schema: {$ref: '#/components/schemas/Amount'}}}
  schemas:
    Amount:
      type: number
      maximum: 1000
      examples: [12345678901234567890.123, 0.10, 1e3, 0x1F]
`;

describe('the spec model', () => {
  it('keeps every number exact, and gives ajv the same tree with plain numbers', () => {
    const spec = parseSpec(MINI, 'mini.yaml');
    const examples = specModel(spec).flatten('Amount').examples as LosslessNumber[];
    expect(examples.map((value) => value.value)).toEqual(['12345678901234567890.123', '0.10', '1e3', '31']);
    expect(specModel(spec).example('Amount', 0)).toEqual(new LosslessNumber('12345678901234567890.123'));
    expect((spec.document.components!.schemas!.Amount as { maximum: unknown }).maximum).toBe(1000);
    expect((spec.document.components!.schemas!.Amount as { examples: unknown[] }).examples[1]).toBe(0.1);
  });

  it('lists operations in order, with the control API marked, and resolves their request schemas', () => {
    const model = specModel(parseSpec(MINI, 'mini.yaml'));
    const endpoints = model.endpoints();
    expect(
      endpoints.map(({ method, path, operationId, control, rules }) => ({ method, path, operationId, control, rules })),
    ).toEqual([
      { method: 'post', path: '/a', operationId: 'a', control: false, rules: ['A-RULE'] },
      { method: 'get', path: '/b', operationId: 'b', control: true, rules: [] },
    ]);
    expect(endpoints[0]!.servers).toEqual([{ url: '{base_url}', variables: {} }]);
    expect(endpoints[0]!.requestBody?.media[0]?.schema.name).toBe('Amount');
    expect(model.endpoint('b')?.path).toBe('/b');
    expect(model.controlOperations().map(({ operationId }) => operationId)).toEqual(['b']);
  });

  it('names a missing example and a dangling $ref as SpecErrors', () => {
    const model = specModel(parseSpec(MINI, 'mini.yaml'));
    expect(() => model.example('Amount', 9, 'the Pact contract')).toThrow(
      new SpecError(
        'missing-example',
        'mini.yaml: components.schemas.Amount has no example 9, which the Pact contract needs',
      ),
    );
    expect(() => model.flatten({ $ref: '#/components/schemas/Nope' })).toThrow(
      '$ref #/components/schemas/Nope points nowhere',
    );
  });

  it('refuses broken YAML and a document that is not OpenAPI, naming the file', () => {
    expect(() => parseSpec('a: [', 'x.yaml')).toThrow(/^x\.yaml: not valid YAML/);
    expect(() => parseSpec('a: 1\na: 2\n', 'x.yaml')).toThrow(/^x\.yaml: not valid YAML/);
    expect(() => parseSpec('a: 1\n', 'x.yaml')).toThrow("x.yaml: not an OpenAPI document (no 'openapi' field)");
  });

  it('finds the callback types of the packaged spec through its webhook', () => {
    const model = specModel(packagedSpec());
    const [callback] = model.callbacks();
    expect(callback).toMatchObject({ name: 'walletCallback', method: 'post', payload: { name: 'CallbackPayload' } });
    expect(model.callbackTypes().map(({ type }) => type)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(model.callbackTypes().map(({ webhook }) => webhook))).toEqual(new Set(['walletCallback']));
    expect(specModel(packagedSpec())).toBe(model);
  });

  it('indexes x-rules by JSON pointer', () => {
    expect(
      ruleIndex({ A: { 'x-rules': ['R-1'], properties: { 'a/b': { 'x-rules': ['R-2'] }, c: { 'x-rules': [] } } } }),
    ).toEqual({
      '/A': ['R-1'],
      '/A/properties/a~1b': ['R-2'],
    });
  });
});
