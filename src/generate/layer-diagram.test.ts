import { describe, expect, it } from 'vitest';
import { architectureWithDiagram, layerDiagram } from './layer-diagram.js';

const table = {
  layers: { core: [], wire: ['core'], runner: ['core', 'wire'], reporters: ['core'] },
  generatedFile: { core: ['validators.js'] },
  typesFrom: { reporters: 'runner' },
};

describe('the layer diagram of ARCHITECTURE.md', () => {
  it('puts each layer on one line, highest first, with what it may import', () => {
    expect(layerDiagram(table).split('\n')).toEqual([
      '```',
      'cli       ──► every layer (nothing imports cli)',
      'runner    ──► core, wire',
      'reporters ──► core; types from runner',
      'wire      ──► core',
      'core      ──► nothing; generated/validators.js',
      '```',
    ]);
  });

  it('refuses a table whose layers import each other round', () => {
    expect(() => layerDiagram({ ...table, layers: { a: ['b'], b: ['a'] } })).toThrow(
      'the layers import each other round: a → b → a',
    );
  });

  it('rewrites only the block between its markers', () => {
    const text =
      'before\n<!-- layers: written by `npm run generate` from LAYERS in eslint.config.js; do not edit -->\nstale\n<!-- /layers -->\nafter\n';
    const { contents } = architectureWithDiagram(text, table);
    expect(contents.startsWith('before\n<!-- layers:')).toBe(true);
    expect(contents.endsWith('```\n<!-- /layers -->\nafter\n')).toBe(true);
    expect(contents).not.toContain('stale');
    expect(architectureWithDiagram(contents, table).contents).toBe(contents);
    expect(() => architectureWithDiagram('no block', table)).toThrow('ARCHITECTURE.md has no layer diagram block');
  });
});
