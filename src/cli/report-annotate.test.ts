import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../runner/types.js';
import { annotations, escapeData, escapeProperty } from './report-annotate.js';

const result = (status: CheckResult['status'], over: Partial<CheckResult> = {}): CheckResult => ({
  id: 'service/energy/success/result',
  suite: 'service/energy',
  case: 'success',
  title: 'A valid query answers the encrypted result',
  rules: ['ENV-CODE', 'ENERGY-RES'],
  status,
  message: 'code was "0" (a string), not the number 0',
  ...over,
});

describe('report annotate', () => {
  it('writes one ::error per failed check and one ::warning per warning, nothing for passed or skipped', () => {
    const lines = annotations({
      results: [
        result('passed'),
        result('failed'),
        result('skipped'),
        result('warning', { rules: ['U-CRYPTO'], message: 'unpadded data accepted' }),
      ],
    });
    expect(lines).toEqual([
      '::error title=wallet-conformance service/energy/success/result [ENV-CODE%2C ENERGY-RES]::code was "0" (a string), not the number 0%0A(case service/energy/success: A valid query answers the encrypted result)',
      '::warning title=wallet-conformance service/energy/success/result [U-CRYPTO]::unpadded data accepted%0A(case service/energy/success: A valid query answers the encrypted result)',
    ]);
  });

  it('leaves warnings out when asked', () => {
    expect(annotations({ results: [result('warning'), result('failed')] }, { warnings: false })).toHaveLength(1);
  });

  it('escapes so that a message cannot end its command or start another one', () => {
    const lines = annotations({
      results: [result('failed', { message: 'line one\r\n::error::forged 100%', id: 'a:b,c' })],
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.split('\n')).toHaveLength(1);
    expect(lines[0]).toContain('title=wallet-conformance a%3Ab%2Cc [');
    expect(lines[0]).toContain('::line one%0D%0A::error::forged 100%25%0A(case');
    expect(escapeData('%0A')).toBe('%250A');
    expect(escapeProperty('x:y,z%')).toBe('x%3Ay%2Cz%25');
  });
});
