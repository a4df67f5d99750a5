import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseSpec } from '../../spec/document.js';
import { generateValidators } from './validators.js';

const scratch = resolve(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'wc-generated-test');
let counter = 0;

/** Loads generated validator code the way the toolkit does: as an ES module next to node_modules. */
async function load(specText: string): Promise<Record<string, ((data: unknown) => boolean) & { errors?: unknown[] }>> {
  const [file] = generateValidators(parseSpec(specText, 'test.yaml'));
  mkdirSync(scratch, { recursive: true });
  const path = join(scratch, `validators-${process.pid}-${counter++}.ts`);
  writeFileSync(path, file!.contents);
  return import(path);
}

function miniSpec(tenantType: number): string {
  return stringify({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {},
    components: {
      schemas: {
        Order: {
          type: 'object',
          required: ['tenantType', 'amount'],
          properties: {
            tenantType: { const: tenantType, 'x-rules': ['ORDER-TENANT-TYPE'] },
            amount: { $ref: '#/components/schemas/Amount' },
            when: { type: 'string', format: 'date-time' },
          },
          'x-rules': ['ORDER-FIELDS'],
        },
        Amount: { anyOf: [{ type: 'number' }, { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$' }] },
      },
    },
  });
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('validator generator', () => {
  it('emits a do-not-edit header carrying the spec sha256, and ES imports instead of require()', () => {
    const spec = parseSpec(miniSpec(1), 'test.yaml');
    const [file] = generateValidators(spec);
    expect(file!.path).toBe('src/generated/validators.ts');
    expect(file!.contents).toContain(`sha256 ${spec.sha256}`);
    expect(file!.contents).toMatch(/Do not edit/);
    expect(file!.contents).not.toMatch(/require\(/);
  });

  it('compiles validators that accept and refuse per the schema, formats included', async () => {
    const v = await load(miniSpec(1));
    expect(v.Order!({ tenantType: 1, amount: '12345678901234567890.123' })).toBe(true);
    expect(v.Order!({ tenantType: 2, amount: 1 })).toBe(false);
    expect(v.Order!({ tenantType: 1, amount: 'lots' })).toBe(false);
    expect(v.Order!({ tenantType: 1, amount: 1, when: 'yesterday' })).toBe(false);
  });

  it('follows the spec: changing the spec changes what is accepted', async () => {
    const before = await load(miniSpec(1));
    const after = await load(miniSpec(2));
    expect(before.Order!({ tenantType: 2, amount: 1 })).toBe(false);
    expect(after.Order!({ tenantType: 2, amount: 1 })).toBe(true);
  });

  it('indexes the rules of each schema location', async () => {
    const v = (await load(miniSpec(1))) as unknown as { RULE_INDEX: Record<string, string[]> };
    expect(v.RULE_INDEX['/Order/properties/tenantType']).toEqual(['ORDER-TENANT-TYPE']);
    expect(v.RULE_INDEX['/Order']).toEqual(['ORDER-FIELDS']);
  });

  it('refuses a spec whose schemas are not JSON Schema, with a SpecError', () => {
    const broken = miniSpec(1).replace('type: object', 'type: objekt');
    expect(() => generateValidators(parseSpec(broken, 'broken.yaml'))).toThrow(
      /broken.yaml: component schemas are not valid JSON Schema/,
    );
  });
});
