import { describe, expect, it } from 'vitest';
import { result, sampleReport } from '../../test/support/sample-report.js';
import { replayCommand, withReplay } from './replay.js';

describe('the replay command of a result', () => {
  it("adds --case suite/case to the run's command, and the --generate/--seed of a generated case", () => {
    expect(
      replayCommand(
        result('service/orders/withdrawal/order-res', 'failed'),
        'wallet-conformance verify service --base-url http://h',
      ),
    ).toBe('wallet-conformance verify service --base-url http://h --case service/orders/withdrawal');
    const generated = result('generated/merchant/any-valid-callback/any-valid-callback', 'failed', {
      suite: 'generated/merchant',
      case: 'any-valid-callback',
      evidence: { generated: { seed: 1234, replay: '--generate 50 --seed 1234' } },
    });
    expect(replayCommand(generated, 'wallet-conformance verify merchant')).toBe(
      'wallet-conformance verify merchant --case generated/merchant/any-valid-callback --generate 50 --seed 1234',
    );
  });

  it('is set on failures and warnings only, and on the report as its command', () => {
    const report = withReplay(sampleReport(), 'wallet-conformance verify service');
    expect(report.replay).toEqual({ command: 'wallet-conformance verify service' });
    expect(
      report.results
        .filter((r) => r.replay)
        .map((r) => r.status)
        .sort(),
    ).toEqual(['failed', 'warning']);
  });
});
