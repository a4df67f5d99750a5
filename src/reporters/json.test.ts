import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { EXACT_AMOUNT, sampleReport } from '../../test/support/sample-report.js';
import { renderJson } from './json.js';
import { withReplay } from './replay.js';

const schema = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../schemas/report.schema.json'), 'utf8'),
) as object;
const validate = new Ajv2020({ strict: false }).compile(schema);

describe('report.json', () => {
  it('writes amounts in evidence as their literal digits, never as lossless-json objects', () => {
    const text = renderJson(sampleReport());
    expect(text).not.toContain('isLosslessNumber');
    expect(text).toContain(`"amount": ${EXACT_AMOUNT}`);
  });

  it('is valid against the package report schema', () => {
    const parsed = JSON.parse(renderJson(sampleReport())) as unknown;
    expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
  });

  it("stays valid with the replay command and each result's cause and replay; a replay that is not text is refused", () => {
    const report = withReplay(sampleReport(), 'wallet-conformance verify service --base-url http://127.0.0.1:4010');
    report.results[7]!.cause = 'undecryptable-answer';
    const parsed = JSON.parse(renderJson(report)) as { results: Array<{ replay?: unknown }> };
    expect(parsed.results[7]!.replay).toBe(
      'wallet-conformance verify service --base-url http://127.0.0.1:4010 --case service/orders/withdrawal',
    );
    expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
    parsed.results[7]!.replay = ['--case'];
    expect(validate(parsed)).toBe(false);
  });

  it('is rejected by the package schema when a number is written as a lossless-json object (as JSON.stringify would)', () => {
    const naive = JSON.parse(JSON.stringify(sampleReport())) as unknown;
    expect(JSON.stringify(naive)).toContain('isLosslessNumber');
    expect(validate(naive)).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toMatch(/^\/results\/\d+\/evidence\//);
  });
});
