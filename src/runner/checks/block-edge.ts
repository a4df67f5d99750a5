/**
 * The block-edge checks (CRYPTO-SAME, ENV-DATA): a differential oracle over requests that carry one
 * content at three plaintext lengths, and an answer whose plaintext ends at an edge of the blocks.
 */
import { plaintextBlockSize } from '../../core/profile.js';
import type { Exchange } from '../observation.js';
import type { ServiceTarget } from '../types.js';
import { familyOf, reasonInMessage } from '../../wire/crypto-failure.js';
import { NO_PARAMS, fail, isFinding, lastExchange, pass, preview, undecryptable, type Check } from './check.js';

/** How a service treated one request: answered (data that opens), refused, or broken. */
type Verdict = 'answered' | 'refused' | 'broken';

/** The verdict of one exchange and a short reason for the message. */
function verdictOf(exchange: Exchange): { verdict: Verdict; why: string } {
  const response = exchange.response;
  if (!response) return { verdict: 'broken', why: `no answer (${exchange.error ?? 'transport failure'})` };
  if (response.status >= 400 && response.status < 500) return { verdict: 'refused', why: `HTTP ${response.status}` };
  const code = (response.json as { code?: unknown } | undefined)?.code;
  if (response.status === 200 && code !== undefined && String(code) !== '0')
    return { verdict: 'refused', why: `code ${String(code)}` };
  // The envelope's own form (code, message) is judged by the envelope check: here only whether data opens.
  if (response.decrypted)
    return { verdict: 'answered', why: response.status === 200 ? 'data opens' : `HTTP ${response.status}, data opens` };
  if (response.status !== 200) return { verdict: 'broken', why: `HTTP ${response.status}` };
  return {
    verdict: 'broken',
    why: response.decryptError ? `data does not open (${response.decryptError})` : 'no data',
  };
}

/** The plaintext length of a request as sent, in bytes. */
const sentBytes = (exchange: Exchange): number => Buffer.byteLength(exchange.request.plain ?? '', 'utf8');

/**
 * `same-verdict`: the step's requests (one content at n·B−1, n·B and n·B+1 bytes: `plainLength`)
 * get one verdict. A request refused or broken while the same content at another length is
 * answered fails CRYPTO-SAME: the block handling, not the content, decided. Refused (or broken) at
 * every length proves nothing against the blocks (a size limit, U-LIMITS, may refuse them all): it
 * passes, and the hand-written cases judge the refusal or the breakage under their own rules.
 */
export const sameVerdictCheck: Check = {
  id: 'same-verdict',
  title: 'one content at several plaintext lengths gets one verdict',
  rules: ['CRYPTO-SAME'],
  needs: 'exchange',
  params: NO_PARAMS,
  run(ctx) {
    const exchanges = ctx.outcome.exchanges;
    if (exchanges.length < 2)
      return [fail(`the step made ${exchanges.length} request(s): a differential verdict needs at least two`)];
    const seen = exchanges.map((exchange) => ({ bytes: sentBytes(exchange), ...verdictOf(exchange) }));
    const shown = seen.map((one) => `${one.bytes} bytes: ${one.verdict} (${one.why})`).join('; ');
    const verdicts = new Set(seen.map((one) => one.verdict));
    if (verdicts.size > 1) return [fail(`one content got different verdicts at different plaintext lengths: ${shown}`)];
    // One verdict at every length is all this oracle judges: the answer itself (refused, or broken
    // alike at every length) is the other cases' finding, under their own rules.
    if (!verdicts.has('answered'))
      return [pass(`${[...verdicts][0]} at every length alike, which proves nothing about the blocks: ${shown}`)];
    return [pass(`answered at every length: ${shown}`)];
  },
};

/** `edge`: where the answer's plaintext should end against the blocks. */
type AnswerEdgeParams = { edge: 'one-under' | 'whole' | 'one-over' };

const OFFSET: Record<AnswerEdgeParams['edge'], number> = { 'one-under': -1, whole: 0, 'one-over': 1 };

/** The distance of `bytes` from the nearest lower whole number of blocks, as an edge offset (−1, 0, 1, or other). */
function offsetOf(bytes: number, block: number): number {
  const rest = bytes % block;
  return rest === block - 1 ? -1 : rest;
}

/**
 * `answer-edge`: the last answer (steered by `answerLength`) opens whole, its plaintext ending at
 * `edge` of the blocks of the merchant's key (ENV-DATA, CRYPTO-SAME). A refusal is skipped (the
 * steered callBackId is long: a length cap is U-LIMITS); an answer that did not land on the edge
 * (the service's answers vary in length) is skipped too: it proves nothing about the edge.
 */
export const answerEdgeCheck: Check<AnswerEdgeParams> = {
  id: 'answer-edge',
  title: 'an answer at a block edge opens whole',
  rules: ['ENV-DATA', 'CRYPTO-SAME'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      edge: {
        enum: ['one-under', 'whole', 'one-over'],
        description: 'where the answer plaintext ends against the RSA blocks',
      },
    },
    required: ['edge'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const { verdict, why } = verdictOf(exchange);
    if (verdict === 'refused')
      return [{ status: 'skipped', message: `the service refused the order (${why}): no answer at the edge to judge` }];
    const response = exchange.response!;
    // Base64 the merchant cannot read is the envelope's form (CRYPTO-ENVELOPE), whatever the length.
    if (response.decryptError && familyOf(reasonInMessage(response.decryptError)) === 'base64')
      return [undecryptable(response.decryptError)];
    // An answer that does not open at the edge breaks ENV-DATA (data holds the result) and CRYPTO-SAME
    // (the callbacks' process handles the edge): a dropped or extra block, a block cut short.
    if (response.decryptError)
      return [
        {
          status: 'failed',
          message: `an answer steered to the ${ctx.params.edge} edge of the blocks does not open whole: ${why}`,
          cause: 'undecryptable-answer',
        },
      ];
    if (verdict === 'broken')
      return [
        fail(
          `an order steered to the ${ctx.params.edge} edge of the blocks got no result: ${why}`,
          response.status === 200 ? ['ENV-DATA'] : undefined,
        ),
      ];
    const target = ctx.target as ServiceTarget;
    const block = plaintextBlockSize(target.profile, target.publicKey.modulusBytes);
    const bytes = Buffer.byteLength(response.decrypted!.text, 'utf8');
    if (offsetOf(bytes, block) !== OFFSET[ctx.params.edge])
      return [
        {
          status: 'skipped',
          message: `the answer's plaintext is ${bytes} bytes, not at the ${ctx.params.edge} edge of ${block}-byte blocks (its length varies between answers): nothing proven`,
        },
      ];
    return [
      pass(
        `the answer's ${bytes}-byte plaintext (${Math.ceil(bytes / block)} blocks of ${block}) opens whole: ${preview(response.decrypted!.text, 60)}`,
      ),
    ];
  },
};
