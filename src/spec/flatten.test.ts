import { describe, expect, it } from 'vitest';
import { SpecError } from '../core/errors.js';
import { LosslessNumber } from '../core/exact-json.js';
import { parseSpec } from './document.js';
import { encryptedField } from './flatten.js';
import { specModel } from './model.js';
import { packagedSpec } from './packaged.js';

const MINI = `openapi: 3.1.0
info: {title: Mini, version: '2', summary: a small spec}
servers: [{url: '{base_url}', variables: {base_url: {default: 'http://127.0.0.1:8080'}}}]
security: [{apiKey: []}]
paths:
  /a:
    post:
      operationId: a
      x-rules: [A-RULE]
      x-unspecified: [{rule: U-A, note: open}]
      parameters: [{$ref: '#/components/parameters/Key', x-rules: [SITE-KEY]}]
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            x-rules: [CT-RULE]
            schema: {$ref: '#/components/schemas/Form'}
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Envelope2'}}}
        '401': {$ref: '#/components/responses/Unauthorized'}
  /ctl:
    get: {operationId: ctl, tags: [control], security: [], servers: [{url: '{control_url}'}], responses: {'204': {description: none}}}
webhooks:
  hook:
    post:
      requestBody:
        content: {text/plain: {schema: {$ref: '#/components/schemas/Body'}}}
      responses: {'200': {description: ok}}
components:
  securitySchemes:
    apiKey: {type: apiKey, in: header, name: X-KEY, x-rules: [SCHEME-RULE]}
  parameters:
    Key: {name: X-KEY, in: header, required: true, schema: {type: string}, example: ak_1, x-rules: [KEY-RULE]}
  responses:
    Unauthorized:
      description: no key
      x-rules: [ERR-401]
      content: {application/json: {schema: {$ref: '#/components/schemas/Err'}}}
  schemas:
    Cipher: {type: string, pattern: '^[A-Z]+$', description: cipher text, x-rules: [C-1, C-2], examples: [ABC]}
    Amount: {x-rules: [AMT], anyOf: [{type: number}, {type: string}, {type: 'null'}], examples: [12345678901234567890.123]}
    Plain:
      type: object
      x-rules: [P-1]
      required: [n]
      properties:
        n: {const: 1, x-rules: [N]}
        amount: {$ref: '#/components/schemas/Amount', description: how much, x-rules: [AMT-SITE]}
        limit: {type: integer, minimum: 0, maximum: 600000}
      if: {properties: {n: {const: 1}}, required: [n]}
      then: {required: [amount]}
    Form:
      type: object
      required: [data]
      properties:
        data:
          $ref: '#/components/schemas/Cipher'
          x-rules: [DATA]
          x-encrypted: {direction: request, plaintext: {$ref: '#/components/schemas/Plain'}}
    Base:
      type: object
      description: the base
      x-rules: [B-1]
      x-unspecified: [{rule: U-B, note: base note}]
      required: [code]
      properties:
        code: {type: integer, x-rules: [CODE]}
        data: {description: base data, anyOf: [{$ref: '#/components/schemas/Cipher'}, {type: 'null'}]}
      examples: [{code: 0}]
    Envelope2:
      description: the envelope
      x-rules: [E-1]
      allOf:
        - $ref: '#/components/schemas/Base'
        - anyOf: [{required: [txid]}, {required: [txId]}]
      properties:
        data:
          x-encrypted: {direction: response, plaintext: {$ref: '#/components/schemas/Plain'}}
    Err:
      allOf: [{$ref: '#/components/schemas/Base'}]
      properties: {code: {const: 401}}
      examples: [{code: 401}]
    Body:
      type: string
      x-encrypted: {direction: callback, plaintext: {$ref: '#/components/schemas/Payload'}}
    Common: {type: object, required: [type], properties: {type: {enum: [1, 2]}}}
    One: {allOf: [{$ref: '#/components/schemas/Common'}], properties: {type: {const: 1}, a: {type: string}}}
    Two: {allOf: [{$ref: '#/components/schemas/Common'}], properties: {type: {const: 2}, b: {type: string}}}
    Payload:
      allOf:
        - $ref: '#/components/schemas/Common'
        - if: {properties: {type: {const: 2}}, required: [type]}
          then: {$ref: '#/components/schemas/Two'}
        - if: {properties: {type: {const: 1}}, required: [type]}
          then: {$ref: '#/components/schemas/One'}
    Loop: {$ref: '#/components/schemas/Loop'}
    Dangling: {properties: {x: {$ref: '#/components/schemas/Nope'}}}
`;

const model = () => specModel(parseSpec(MINI, 'mini.yaml'));

describe('flatten: one view of a schema', () => {
  it('follows a $ref: the site overrides the target, rules add up, the component is named', () => {
    const amount = model().flatten('Plain').properties.amount!;
    expect(amount.name).toBe('Amount');
    expect(amount.description).toBe('how much');
    expect(amount.rules).toEqual(['AMT', 'AMT-SITE']);
    expect(amount.ownRules).toEqual(['AMT']);
    expect(amount.site).toEqual({ description: 'how much', rules: ['AMT-SITE'], unspecified: [] });
    expect(amount.nullable).toBe(true);
    expect(amount.anyOf!.map((branch) => branch.type)).toEqual(['number', 'string', 'null']);
    // Values stay exact; bounds are numbers.
    expect(amount.examples).toEqual([new LosslessNumber('12345678901234567890.123')]);
    expect(model().flatten('Plain').properties.limit).toMatchObject({ type: 'integer', minimum: 0, maximum: 600000 });
    expect(model().flatten('Plain').properties.n!.const).toEqual(new LosslessNumber('1'));
  });

  it('merges allOf: inherited properties first, own keywords last, parts kept with their names', () => {
    const envelope = model().flatten('Envelope2');
    expect(envelope.name).toBe('Envelope2');
    expect(envelope.description).toBe('the envelope');
    expect(envelope.type).toBe('object');
    expect(Object.keys(envelope.properties)).toEqual(['code', 'data']);
    expect(envelope.required).toEqual(['code']);
    expect(envelope.requiredChoices).toEqual([[['txid'], ['txId']]]);
    expect(envelope.rules).toEqual(['B-1', 'E-1']);
    expect(envelope.ownRules).toEqual(['E-1']);
    expect(envelope.unspecified).toEqual([{ rule: 'U-B', note: 'base note' }]);
    // Examples are the schema's own; the part's stay with the part.
    expect(envelope.examples).toEqual([]);
    expect(envelope.parts.map((part) => [part.name, part.examples.length])).toEqual([['Base', 1]]);
    // A property named twice merges: the base's type and description, the own marker.
    const data = envelope.properties.data!;
    expect(data.description).toBe('base data');
    expect(data.anyOf![0]!.name).toBe('Cipher');
    expect(data.encrypted).toEqual({
      direction: 'response',
      plaintext: 'Plain',
      plaintextRef: '#/components/schemas/Plain',
    });
    expect(encryptedField(envelope, 'response')?.field).toBe('data');
    expect(encryptedField(envelope, 'request')).toBeUndefined();
    expect(model().flatten('Err').properties.code!).toMatchObject({
      type: 'integer',
      const: new LosslessNumber('401'),
      rules: ['CODE'],
    });
  });

  it('keeps if/then as conditions, parts first', () => {
    const payload = model().flatten('Payload');
    expect(payload.conditions.map((condition) => [condition.if.properties.type!.const, condition.then.name])).toEqual([
      [new LosslessNumber('2'), 'Two'],
      [new LosslessNumber('1'), 'One'],
    ]);
    expect(model().flatten('Plain').conditions[0]!.then.required).toEqual(['amount']);
  });

  it('is built once per node, and names a dangling or circular $ref', () => {
    const m = model();
    expect(m.flatten('Plain')).toBe(m.flatten('Plain'));
    expect(() => m.flatten('Dangling')).toThrow('$ref #/components/schemas/Nope points nowhere');
    expect(() => m.flatten('Loop')).toThrow(SpecError);
    expect(() => m.flatten('Nope')).toThrow('mini.yaml: no component schema Nope');
  });
});

describe('the typed views', () => {
  it('reads an endpoint: servers, key header, media type, encrypted field and plain schema, responses, rules', () => {
    const m = model();
    expect(m.endpoints().map((endpoint) => [endpoint.operationId, endpoint.control])).toEqual([
      ['a', false],
      ['ctl', true],
    ]);
    expect(m.serviceEndpoints().map((endpoint) => endpoint.operationId)).toEqual(['a']);
    expect(m.controlOperations().map((endpoint) => endpoint.operationId)).toEqual(['ctl']);
    const a = m.endpoint('a')!;
    expect(a.servers).toEqual([{ url: '{base_url}', variables: { base_url: { default: 'http://127.0.0.1:8080' } } }]);
    expect(a.rules).toEqual(['A-RULE']);
    expect(a.unspecified).toEqual([{ rule: 'U-A', note: 'open' }]);
    expect(a.apiKey).toEqual({ header: 'X-KEY', scheme: 'apiKey', rules: ['KEY-RULE', 'SCHEME-RULE'] });
    expect(a.declaresSecurity).toBe(false);
    expect(a.parameters[0]).toMatchObject({
      name: 'X-KEY',
      in: 'header',
      required: true,
      component: 'Key',
      example: 'ak_1',
      rules: ['SITE-KEY', 'KEY-RULE'],
      ownRules: ['KEY-RULE'],
    });
    const [media] = a.requestBody!.media;
    expect(media).toMatchObject({
      mediaType: 'application/x-www-form-urlencoded',
      rules: ['CT-RULE'],
      schemaIsComponent: true,
    });
    expect(media!.schema.name).toBe('Form');
    expect(media!.encrypted!.field).toBe('data');
    expect(media!.encrypted!.schema).toMatchObject({ pattern: '^[A-Z]+$', site: { rules: ['DATA'] } });
    expect(media!.encrypted!.plain!.name).toBe('Plain');
    expect(a.responses.map((response) => [response.status, response.component, response.rules])).toEqual([
      ['200', undefined, []],
      ['401', 'Unauthorized', ['ERR-401']],
    ]);
    expect(a.responses[0]!.media[0]!.encrypted).toMatchObject({
      field: 'data',
      marker: { direction: 'response', plaintext: 'Plain' },
    });
    expect(a.responses[1]!.media[0]!.schema.examples).toEqual([{ code: new LosslessNumber('401') }]);
    const ctl = m.endpoint('ctl')!;
    expect(ctl).toMatchObject({
      declaresSecurity: true,
      security: [],
      apiKey: undefined,
      servers: [{ url: '{control_url}', variables: {} }],
    });
  });

  it('reads a callback: the encrypted body, the payload and its type dispatch', () => {
    const [hook] = model().callbacks();
    expect(hook).toMatchObject({
      name: 'hook',
      method: 'post',
      types: [
        { type: 1, schema: 'One' },
        { type: 2, schema: 'Two' },
      ],
    });
    expect(hook!.payload!.name).toBe('Payload');
    expect(hook!.requestBody!.media[0]!.encrypted).toMatchObject({
      field: undefined,
      marker: { direction: 'callback', plaintext: 'Payload' },
    });
  });

  it('lists info, servers and every annotated place', () => {
    const m = model();
    expect(m.info()).toEqual({ title: 'Mini', version: '2', summary: 'a small spec' });
    expect(m.servers()[0]!.url).toBe('{base_url}');
    const annotations = m.annotations();
    expect(annotations.find((entry) => entry.pointer === '/paths/~1a/post')).toEqual({
      pointer: '/paths/~1a/post',
      rules: ['A-RULE'],
      unspecified: [{ rule: 'U-A', note: 'open' }],
    });
    expect(annotations.find((entry) => entry.pointer === '/components/schemas/Body')!.encrypted).toEqual({
      direction: 'callback',
      plaintext: 'Payload',
      plaintextRef: '#/components/schemas/Payload',
    });
    expect(m.schemaNames()).toContain('Envelope2');
  });

  it('reads the packaged spec: three service endpoints, the control API, one webhook with seven types', () => {
    const m = specModel(packagedSpec());
    expect(m.serviceEndpoints().map((endpoint) => endpoint.operationId)).toEqual([
      'getEnergyMaxCount',
      'withdrawWithoutVerify',
      'closeCard',
    ]);
    expect(m.controlOperations().length).toBeGreaterThan(0);
    expect(m.callbacks().map((callback) => [callback.name, callback.types.length])).toEqual([['walletCallback', 7]]);
    expect(m.callbacks()[0]!.types).toEqual(m.callbackTypes().map(({ type, schema }) => ({ type, schema })));
    const order = m.endpoint('withdrawWithoutVerify')!;
    expect(order.requestBody!.media[0]!.encrypted!.plain!.name).toBe('OrderRequest');
    expect(order.responses.find((response) => response.status === '200')!.media[0]!.encrypted!.marker.plaintext).toBe(
      'OrderResult',
    );
  });
});
