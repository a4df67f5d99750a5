import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import { envelopeCheck } from './envelope.js';

/** Answers are JSON-typed unless a row sets its own headers (see the Content-Type rows). */
const asJson = (response: ReceivedResponse): ReceivedResponse =>
  Object.keys(response.headers).length
    ? response
    : { ...response, headers: { 'content-type': 'application/json; charset=utf-8' } };
const run = (outcome: string | undefined, response: ReceivedResponse | undefined): Finding[] =>
  envelopeCheck.run(
    checkContext({
      params: outcome ? { outcome } : {},
      outcome: { exchanges: response ? [exchange(asJson(response))] : [] },
    }),
  );
const ok = '{"code":0,"message":"","data":"AQID"}';

describe('envelope: the order endpoints answer HTTP 200 with {code, message, data}', () => {
  it('is registered as envelope under ENV-CODE, ENV-MSG and ENV-DATA', () => {
    expect([envelopeCheck.id, envelopeCheck.rules]).toEqual(['envelope', ['ENV-CODE', 'ENV-MSG', 'ENV-DATA']]);
  });

  it.each([
    [
      'a success whose data decrypts',
      undefined,
      decryptedAnswer(200, ok, '{"energyMaxCount":3}'),
      [{ status: 'passed', message: 'code 0, data decrypts to {"energyMaxCount":3}' }],
    ],
    [
      'a success where outcome success is explicit',
      'success',
      decryptedAnswer(200, ok, '{}'),
      [{ status: 'passed', message: 'code 0, data decrypts to {}' }],
    ],
    [
      'a failure envelope where a failure is expected',
      'failure',
      answer(200, '{"code":40011,"message":"tenantType must be 1","data":""}'),
      [{ status: 'passed', message: 'code 40011: tenantType must be 1' }],
    ],
    [
      'HTTP 401 where an envelope is expected',
      undefined,
      answer(401, '{"code":"UNAUTHORIZED"}'),
      [{ status: 'failed', message: 'expected HTTP 200 with an envelope, got 401: {"code":"UNAUTHORIZED"}' }],
    ],
    [
      'HTTP 200 with a body that is not JSON',
      undefined,
      answer(200, '<html>'),
      [{ status: 'failed', message: 'the body is not JSON: <html>' }],
    ],
    [
      'code "0" as a string',
      undefined,
      answer(200, '{"code":"0","message":"","data":"AQID"}'),
      [
        {
          status: 'failed',
          message:
            'not a valid envelope: /code must be integer [ENV-CODE]; body {"code":"0","message":"","data":"AQID"}',
          rules: ['ENV-CODE'],
        },
      ],
    ],
    [
      'a string code and URL-safe data: the envelope rule, not the data rule',
      undefined,
      answer(200, '{"code":"0","message":"","data":"AQ-_"}'),
      [
        {
          status: 'failed',
          message:
            'not a valid envelope: /code must be integer [ENV-CODE]; /data must match pattern "^[A-Za-z0-9+/]+={0,2}$" [ENERGY-DATA, ORDER-DATA, CRYPTO-ENVELOPE]; /data must be equal to constant [ENV-DATA]; /data must be null [ENV-DATA]; /data must match a schema in anyOf [ENV-DATA]; body {"code":"0","message":"","data":"AQ-_"}',
          rules: ['ENV-CODE'],
        },
      ],
    ],
    [
      'message null on a success',
      undefined,
      answer(200, '{"code":0,"message":null,"data":"AQID"}'),
      [
        {
          status: 'failed',
          message:
            'not a valid envelope: /message must be equal to constant [ENV-MSG]; /message must be string [ENV-MSG]; body {"code":0,"message":null,"data":"AQID"}',
          rules: ['ENV-MSG'],
        },
      ],
    ],
    [
      'code 0 where a failure is expected',
      'failure',
      answer(200, ok),
      [{ status: 'failed', message: 'expected a failure (non-zero code), got code 0' }],
    ],
    [
      'code 0 with data where a failure is expected',
      'failure',
      decryptedAnswer(200, ok, '{"id":"cb-1"}'),
      [{ status: 'failed', message: 'expected a failure (non-zero code), got code 0 with data {"id":"cb-1"}' }],
    ],
    [
      'a failure code without error text',
      'failure',
      answer(200, '{"code":40011,"message":"","data":""}'),
      [
        {
          status: 'failed',
          message: 'failure code 40011 with an empty message (ENV-MSG: message carries the error text)',
          rules: ['ENV-MSG'],
        },
      ],
    ],
    [
      'a failure code where a success is expected',
      undefined,
      answer(200, '{"code":40011,"message":"tenantType must be 1","data":""}'),
      [{ status: 'failed', message: 'expected success (code 0), got code 40011: tenantType must be 1' }],
    ],
    [
      'a success whose data does not decrypt (a key mismatch: CRYPTO-SAME)',
      undefined,
      answer(200, ok, { decryptError: 'block 1 of 1: no known padding [wrong-key]' }),
      [
        {
          status: 'failed',
          message: "data does not decrypt with the merchant's key: block 1 of 1: no known padding [wrong-key]",
          rules: ['CRYPTO-SAME'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'a success whose data is not canonical Base64 (CRYPTO-ENVELOPE)',
      undefined,
      answer(200, ok, { decryptError: 'the Base64 text is not canonical [non-canonical-base64]' }),
      [
        {
          status: 'failed',
          message:
            "data does not decrypt with the merchant's key: the Base64 text is not canonical [non-canonical-base64]",
          rules: ['CRYPTO-ENVELOPE'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'a success without decrypted data',
      undefined,
      answer(200, ok),
      [{ status: 'failed', message: 'success without data', rules: ['ENV-DATA'] }],
    ],
    [
      'a success without a data field (ENV-DATA, not the Base64 pattern)',
      undefined,
      answer(200, '{"code":0,"message":""}'),
      [
        {
          status: 'failed',
          message: 'success (code 0) without data: {"code":0,"message":""}',
          rules: ['ENV-DATA'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'a success with data null (ENV-DATA: once for the step)',
      'success',
      answer(200, '{"code":0,"message":"","data":null}'),
      [
        {
          status: 'failed',
          message: 'success (code 0) without data: {"code":0,"message":"","data":null}',
          rules: ['ENV-DATA'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'a success with empty data',
      undefined,
      answer(200, '{"code":0,"message":"","data":""}'),
      [
        {
          status: 'failed',
          message: 'success (code 0) without data: {"code":0,"message":"","data":""}',
          rules: ['ENV-DATA'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'a failure with empty data, where a failure is expected (data on failure is open)',
      'failure',
      answer(200, '{"code":40001,"message":"bad","data":""}'),
      [{ status: 'passed', message: 'code 40001: bad' }],
    ],
    ['no request', undefined, undefined, [{ status: 'failed', message: 'the step made no request' }]],
  ])('judges %s', (_label, outcome, response, findings) => {
    expect(run(outcome, response)).toEqual(findings);
  });

  it('cuts long bodies and messages at 160 characters', () => {
    const text = 'm'.repeat(170);
    expect(run(undefined, answer(200, `{"code":1,"message":"${text}","data":""}`))).toEqual([
      { status: 'failed', message: `expected success (code 0), got code 1: ${text.slice(0, 160)}…` },
    ]);
    expect(run('failure', answer(200, `{"code":1,"message":"${text}","data":""}`))).toEqual([
      { status: 'passed', message: `code 1: ${text.slice(0, 160)}…` },
    ]);
  });

  it.each([
    [
      'text/plain',
      { 'content-type': 'text/plain' },
      'a JSON envelope answered with Content-Type text/plain: typed JSON clients refuse to read it; no rule fixes it (U-CODES). The envelope itself: code 0, data decrypts to {}',
    ],
    [
      'no Content-Type at all',
      { 'x-other': '1' },
      'a JSON envelope answered with no Content-Type: typed JSON clients refuse to read it; no rule fixes it (U-CODES). The envelope itself: code 0, data decrypts to {}',
    ],
  ])('warns under U-CODES, never fails a MUST, on a passing envelope with %s', (_label, headers, message) => {
    expect(run(undefined, { ...decryptedAnswer(200, ok, '{}'), headers })).toEqual([
      { status: 'failed', message, rules: ['U-CODES'] },
    ]);
  });

  it.each([
    ['application/json'],
    ['application/json;charset=UTF-8'],
    ['Application/JSON'],
    ['application/problem+json'],
  ])('takes %s as JSON', (type) => {
    expect(run(undefined, { ...decryptedAnswer(200, ok, '{}'), headers: { 'content-type': type } })).toEqual([
      { status: 'passed', message: 'code 0, data decrypts to {}' },
    ]);
  });

  it('judges the envelope first: a MUST it breaks stands whatever the Content-Type', () => {
    expect(
      run(undefined, {
        ...answer(200, '{"code":0,"message":"x","data":"AQID"}'),
        headers: { 'content-type': 'text/html' },
      }),
    ).toEqual([
      {
        status: 'failed',
        message:
          'not a valid envelope: /message must be equal to constant [ENV-MSG]; body {"code":0,"message":"x","data":"AQID"}',
        rules: ['ENV-MSG'],
      },
    ]);
    expect(
      run('failure', {
        ...answer(200, '{"code":7,"message":"no","data":""}'),
        headers: { 'content-type': 'text/html' },
      }),
    ).toEqual([
      {
        status: 'failed',
        message:
          'a JSON envelope answered with Content-Type text/html: typed JSON clients refuse to read it; no rule fixes it (U-CODES). The envelope itself: code 7: no',
        rules: ['U-CODES'],
      },
    ]);
  });

  it('warns under U-CRYPTO when data opened only read leniently (no = padding), and judges the rest', () => {
    expect(
      run(undefined, {
        ...decryptedAnswer(200, '{"code":0,"message":"","data":"AQI"}', '{}'),
        lenientBase64: 'missing-padding',
      }),
    ).toEqual([
      {
        status: 'failed',
        message:
          "data is Base64 with missing-padding: the pattern of the envelope's data allows it and Java's decoder reads it, a strict decoder refuses it (U-CRYPTO). The envelope itself: code 0, data decrypts to {}",
        rules: ['U-CRYPTO'],
      },
    ]);
    expect(
      run(undefined, { ...answer(200, '{"code":0,"message":"x","data":"AQI"}'), lenientBase64: 'missing-padding' })[0],
    ).toMatchObject({
      rules: ['ENV-MSG'],
    });
  });
});
