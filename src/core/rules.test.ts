import { describe, expect, it } from 'vitest';
import { bindsSide, parseRuleCatalog } from './rules.js';

const entry = (binds: string) => `rules:\n  - id: A-B\n    text: t\n    severity: MUST\n${binds}    source: s\n`;

describe('parseRuleCatalog: binds, the party a rule obliges', () => {
  it('reads service, merchant and both, and counts an entry without binds as both', () => {
    expect(
      ['service', 'merchant', 'both'].map((binds) => parseRuleCatalog(entry(`    binds: ${binds}\n`))[0]!.binds),
    ).toEqual(['service', 'merchant', 'both']);
    expect(parseRuleCatalog(entry(''))[0]!.binds).toBe('both');
  });

  it('refuses another value with the rule named', () => {
    expect(() => parseRuleCatalog(entry('    binds: wallet\n'))).toThrow(
      'spec/rules.yaml: rule A-B has binds "wallet" (service, merchant or both)',
    );
  });

  it('binds a side when the rule names it, both, or nothing', () => {
    expect([
      bindsSide({ binds: 'service' }, 'service'),
      bindsSide({ binds: 'service' }, 'merchant'),
      bindsSide({ binds: 'both' }, 'merchant'),
      bindsSide({}, 'merchant'),
    ]).toEqual([true, false, true, true]);
  });
});
