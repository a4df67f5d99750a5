import { describe, expect, it } from 'vitest';
import { isAcknowledged, readAcknowledgement, type AcknowledgementVerdict } from './acknowledgement.js';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import { ERR_CODES } from '../merchant/callback-handler.js';

describe('readAcknowledgement (CB-ERRCODE; its open edges U-CB-RESPONSE)', () => {
  it.each<[string, number, string, AcknowledgementVerdict, string | undefined]>([
    ['the plain form', 200, '{"errCode":0}', 'acknowledged', '0'],
    ['the plain form with a message', 200, '{"errCode":0,"message":"ok"}', 'acknowledged', '0'],
    ['0 written 0.0', 200, '{"errCode":0.0}', 'ambiguous', '0.0'],
    ['0 written -0', 200, '{"errCode":-0}', 'ambiguous', '-0'],
    ['0 written 0e0', 200, '{"errCode":0e0}', 'ambiguous', '0e0'],
    ['errCode 0 with HTTP 500', 500, '{"errCode":0}', 'ambiguous', '0'],
    ['errCode 0 with HTTP 202', 202, '{"errCode":0}', 'ambiguous', '0'],
    ['errCode the string "0"', 200, '{"errCode":"0"}', 'not-acknowledged', '"0"'],
    ['code instead of errCode', 200, '{"code":0}', 'not-acknowledged', undefined],
    ['a text body', 200, 'success', 'not-acknowledged', undefined],
    ['an empty body', 200, '', 'not-acknowledged', undefined],
    ['a JSON array', 200, '[{"errCode":0}]', 'not-acknowledged', undefined],
    ['a bare number', 200, '0', 'not-acknowledged', undefined],
    ['null', 200, 'null', 'not-acknowledged', undefined],
    ['errCode 1', 200, '{"errCode":1}', 'not-acknowledged', '1'],
    ['errCode 0.5', 200, '{"errCode":0.5}', 'not-acknowledged', '0.5'],
    ['errCode null', 200, '{"errCode":null}', 'not-acknowledged', 'null'],
    ['errCode 1 with HTTP 500', 500, '{"errCode":1}', 'not-acknowledged', '1'],
    ['no answer (status 0)', 0, '{"errCode":0}', 'not-acknowledged', undefined],
  ])('%s: HTTP %i %s is %s', (_name, status, body, verdict, errCode) => {
    const read = readAcknowledgement({ status, body });
    expect(read.verdict).toBe(verdict);
    expect(read.errCode).toBe(errCode);
    expect(read.reason).not.toBe('');
    expect(isAcknowledged({ status, body })).toBe(verdict === 'acknowledged');
  });

  it.each<[number, string, string]>([
    [200, '{"errCode":0}', 'HTTP 200, errCode 0'],
    [200, '', 'HTTP 200 with an empty body (no errCode)'],
    [204, '  \n', 'HTTP 204 with an empty body (no errCode)'],
    [200, 'success', 'HTTP 200 with a body that is not a JSON object (no errCode)'],
    [200, '7', 'HTTP 200 with a body that is not a JSON object (no errCode)'],
    [200, '"ok"', 'HTTP 200 with a body that is not a JSON object (no errCode)'],
    [500, '{"code":0}', 'HTTP 500 without errCode'],
    [200, '{"errCode":"0"}', 'errCode "0" is not a number'],
    [200, '{"errCode":false}', 'errCode false is not a number'],
    [200, '{"errCode":1}', 'errCode 1'],
    [200, '{"errCode":-0.0}', 'errCode written -0.0 (a strictly typed service may not read it as 0)'],
    [503, '{"errCode":0}', 'errCode 0 with HTTP 503 (a service that reads the status first counts it as a failure)'],
  ])('HTTP %i %s reads as: %s', (status, body, reason) => {
    expect(readAcknowledgement({ status, body }).reason).toBe(reason);
  });

  it('reads no answer at all as not acknowledged', () => {
    expect(readAcknowledgement(undefined)).toEqual({ verdict: 'not-acknowledged', reason: 'no answer' });
  });

  it('uses the exact JSON the caller already parsed instead of the body', () => {
    expect(readAcknowledgement({ status: 200, body: 'ignored', json: parseExactJson('{"errCode":0}') }).verdict).toBe(
      'acknowledged',
    );
    expect(
      readAcknowledgement({ status: 200, body: '{"errCode":0}', json: parseExactJson('{"errCode":0.0}') }).verdict,
    ).toBe('ambiguous');
  });
});

describe("the reference merchant's answers", () => {
  it('acknowledge only with errCode 0 at HTTP 200; every other code is not acknowledged at any status, never ambiguous', () => {
    for (const [name, errCode] of Object.entries(ERR_CODES)) {
      for (const status of [200, 400, 409, 500]) {
        const verdict = readAcknowledgement({ status, body: stringifyExact({ errCode, message: '' }) }).verdict;
        if (name === 'ok') expect(verdict).toBe(status === 200 ? 'acknowledged' : 'ambiguous');
        else expect(verdict, `${name} at HTTP ${status}`).toBe('not-acknowledged');
      }
    }
  });
});
