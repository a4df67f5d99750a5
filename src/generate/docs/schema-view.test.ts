import { describe, expect, it } from 'vitest';
import { parseSpec } from '../../spec/document.js';
import { specModel } from '../../spec/model.js';
import { objectView, typeText } from './schema-view.js';

/** A spec with the shapes the pages show: a field that references a described schema, options with and without their own pattern, inherited fields, a condition. */
const SPEC = `
openapi: 3.1.0
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    Cipher:
      type: string
      description: The referenced schema's own words.
      pattern: ^[A-Z]+$
      x-rules: [CIPHER]
    Base:
      type: object
      required: [code]
      properties:
        code: {type: integer, x-rules: [CODE]}
        data:
          description: Written at the field.
          x-rules: [DATA]
          anyOf:
            - $ref: '#/components/schemas/Cipher'
            - {type: string, pattern: ^x$}
            - {type: 'null'}
    Answer:
      description: An answer.
      x-rules: [ANSWER]
      allOf:
        - $ref: '#/components/schemas/Base'
      properties:
        plain: {$ref: '#/components/schemas/Cipher'}
      if: {properties: {code: {const: 1}}, required: [code]}
      then: {required: [plain], x-rules: [PLAIN]}
      examples: [{note: ok}]
`;

const model = specModel(parseSpec(SPEC, 'schema-view.yaml'));

describe("objectView over the model's flattened schema", () => {
  const view = objectView(model.flatten('Answer'));
  const field = (path: string) => view.fields.find((row) => row.path === path)!;

  it('names the schema, keeps its own rules, description and examples, and lists inherited fields first', () => {
    expect(view).toMatchObject({
      name: 'Answer',
      description: 'An answer.',
      rules: ['ANSWER'],
      examples: [{ note: 'ok' }],
    });
    expect(view.fields.map((row) => [row.path, row.required])).toEqual([
      ['code', true],
      ['data', false],
      ['plain', false],
    ]);
  });

  it('shows what is written at a field, not what the schema it references says', () => {
    expect(field('data')).toMatchObject({ description: 'Written at the field.', rules: ['DATA'] });
    expect(field('plain')).toMatchObject({ description: '', rules: [], type: 'Cipher: string' });
  });

  it('shows a pattern written on an option, not the pattern of a referenced option (its type names it)', () => {
    expect(field('data').type).toBe('Cipher: string | string | null');
    expect(field('data').constraints).toEqual(['pattern ^x$']);
    expect(field('plain').constraints).toEqual(['pattern ^[A-Z]+$']);
  });

  it('describes a condition with its effects and rules', () => {
    expect(view.conditions).toEqual([{ when: 'code = 1', then: ['plain is required'], rules: ['PLAIN'] }]);
  });

  it('describes types: a referenced object by name, an unknown schema as any', () => {
    expect(typeText(model.flatten('Base'))).toBe('object (Base)');
    expect(typeText(undefined)).toBe('any');
  });
});
