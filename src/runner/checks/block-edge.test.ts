import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { Exchange } from '../observation.js';
import { answerEdgeCheck, sameVerdictCheck } from './block-edge.js';

const ok = '{"code":0,"message":"","data":"AQID"}';
/** A request of `bytes` bytes of plaintext (the test key's blocks are 117 bytes) and its answer. */
const sent = (bytes: number, response: Parameters<typeof exchange>[0]): Exchange =>
  exchange(response, { plain: `{${' '.repeat(bytes - 2)}}` });
const answered = (bytes: number) => sent(bytes, decryptedAnswer(200, ok, '{"energyMaxCount":1}'));
const refused = (bytes: number) => sent(bytes, answer(200, '{"code":4004,"message":"cannot decrypt","data":""}'));
const verdict = (exchanges: Exchange[]) => sameVerdictCheck.run(checkContext({ outcome: { exchanges } }));

describe('same-verdict: one content at three plaintext lengths gets one verdict (CRYPTO-SAME)', () => {
  it('is registered under CRYPTO-SAME', () => {
    expect([sameVerdictCheck.id, sameVerdictCheck.rules]).toEqual(['same-verdict', ['CRYPTO-SAME']]);
  });

  it('passes three answers, and three refusals (which prove nothing about the blocks)', () => {
    expect(verdict([answered(116), answered(117), answered(118)])).toEqual([
      {
        status: 'passed',
        message:
          'answered at every length: 116 bytes: answered (data opens); 117 bytes: answered (data opens); 118 bytes: answered (data opens)',
      },
    ]);
    expect(verdict([refused(116), refused(117), refused(118)])[0]).toMatchObject({
      status: 'passed',
      message: expect.stringMatching(/^refused at every length/) as unknown,
    });
  });

  it('fails the whole-block request refused alone', () => {
    expect(verdict([answered(116), refused(117), answered(118)])).toEqual([
      {
        status: 'failed',
        message:
          'one content got different verdicts at different plaintext lengths: 116 bytes: answered (data opens); 117 bytes: refused (code 4004); 118 bytes: answered (data opens)',
      },
    ]);
  });

  it('fails a length the service breaks on while it answers or refuses the others', () => {
    const broken = sent(117, answer(500, 'boom'));
    expect(verdict([refused(116), broken, refused(118)])[0]).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('117 bytes: broken (HTTP 500)') as unknown,
    });
    const undecryptable = sent(117, answer(200, ok, { decryptError: 'not JSON' }));
    expect(verdict([answered(116), undecryptable, answered(118)])[0]).toMatchObject({ status: 'failed' });
  });

  it('passes a service broken alike at every length: the other cases judge that under their own rules', () => {
    const broken = (bytes: number) =>
      sent(bytes, answer(200, ok, { decryptError: 'the text uses the URL-safe Base64 alphabet [url-safe-alphabet]' }));
    expect(verdict([broken(116), broken(117), broken(118)])[0]).toMatchObject({
      status: 'passed',
      message: expect.stringMatching(/^broken at every length alike/) as unknown,
    });
  });

  it('needs at least two requests', () => {
    expect(verdict([answered(117)])).toEqual([
      { status: 'failed', message: 'the step made 1 request(s): a differential verdict needs at least two' },
    ]);
  });
});

describe('answer-edge: an answer steered to a block edge opens whole (ENV-DATA, CRYPTO-SAME)', () => {
  const judge = (edge: string, response: Parameters<typeof exchange>[0]) =>
    answerEdgeCheck.run(checkContext({ params: { edge }, outcome: { exchanges: [exchange(response)] } }));
  const text = (bytes: number) => `{"id":"${'e'.repeat(bytes - 9)}"}`;

  it('passes an answer of exactly two blocks that opens', () => {
    expect(judge('whole', decryptedAnswer(200, ok, text(234)))[0]).toMatchObject({
      status: 'passed',
      message: expect.stringContaining('234-byte plaintext (2 blocks of 117)') as unknown,
    });
    expect(judge('one-under', decryptedAnswer(200, ok, text(233)))[0]).toMatchObject({ status: 'passed' });
    expect(judge('one-over', decryptedAnswer(200, ok, text(235)))[0]).toMatchObject({ status: 'passed' });
  });

  it('fails an accepted answer that does not open (a dropped last block leaves JSON cut short), or has no data', () => {
    expect(judge('whole', answer(200, ok, { decryptError: 'the decrypted text is not JSON [not-json]' }))).toEqual([
      {
        status: 'failed',
        message:
          'an answer steered to the whole edge of the blocks does not open whole: data does not open (the decrypted text is not JSON [not-json])',
        cause: 'undecryptable-answer',
      },
    ]);
    expect(judge('whole', answer(200, '{"code":0,"message":"","data":""}'))).toEqual([
      {
        status: 'failed',
        message: 'an order steered to the whole edge of the blocks got no result: no data',
        rules: ['ENV-DATA'],
      },
    ]);
  });

  it('leaves Base64 the merchant cannot read to the envelope rule (CRYPTO-ENVELOPE), whatever the length', () => {
    expect(
      judge(
        'whole',
        answer(200, ok, { decryptError: 'the text uses the URL-safe Base64 alphabet [url-safe-alphabet]' }),
      )[0],
    ).toMatchObject({
      status: 'failed',
      rules: ['CRYPTO-ENVELOPE'],
    });
  });

  it('skips a refusal, and an answer that missed the edge', () => {
    expect(judge('whole', answer(200, '{"code":2010,"message":"too long","data":""}'))[0]).toMatchObject({
      status: 'skipped',
    });
    expect(judge('whole', answer(400, '{}'))[0]).toMatchObject({ status: 'skipped' });
    expect(judge('whole', decryptedAnswer(200, ok, text(240)))[0]).toMatchObject({
      status: 'skipped',
      message: expect.stringContaining('240 bytes, not at the whole edge') as unknown,
    });
  });
});
