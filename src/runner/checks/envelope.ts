import { mediaType } from '../../platform/http-io.js';
import { validateSchema } from '../../core/schemas.js';
import type { ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import {
  describeIssues,
  fail,
  isFinding,
  issueRules,
  lastExchange,
  pass,
  preview,
  undecryptable,
  type Check,
} from './check.js';

/** application/json or a structured `+json` type, with any parameters. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/;

/**
 * A passing envelope under a Content-Type that is not JSON: no rule fixes the answer's Content-Type
 * (the interface says only "JSON"), but typed JSON clients (Spring's RestTemplate, Go's strict
 * decoders behind a type switch) refuse to read it. How the order endpoints write their answers
 * beyond what the interface shows is U-CODES: a warning, a failure only under --strict.
 */
function judgedWireForm(response: ReceivedResponse, passed: Finding): Finding {
  // data the pattern allows but a strict decoder refuses (Python's b64decode with validate, a padding check).
  if (response.lenientBase64)
    return fail(
      `data is Base64 with ${response.lenientBase64}: the pattern of the envelope's data allows it and Java's decoder reads it, a strict decoder refuses it (U-CRYPTO). The envelope itself: ${passed.message}`,
      ['U-CRYPTO'],
    );
  const header = response.headers['content-type'];
  if (JSON_MEDIA_TYPE.test(mediaType(header))) return passed;
  const shown = header === undefined ? 'no Content-Type' : `Content-Type ${header}`;
  return fail(
    `a JSON envelope answered with ${shown}: typed JSON clients refuse to read it; no rule fixes it (U-CODES). The envelope itself: ${passed.message}`,
    ['U-CODES'],
  );
}

/** `outcome`: success (the default) or failure. */
type EnvelopeParams = { outcome?: 'success' | 'failure' };

/**
 * `envelope`: HTTP 200 with the order-endpoint envelope; `outcome: success` needs code 0, an
 * empty message and `data` that decrypts; `outcome: failure` needs a non-zero code and error text.
 * An envelope that passes under a Content-Type other than JSON warns (U-CODES); one whose `data` opens
 * only when read leniently (no '=' padding, non-zero unused bits) warns (U-CRYPTO).
 */
export const envelopeCheck: Check<EnvelopeParams> = {
  id: 'envelope',
  title: 'response envelope',
  rules: ['ENV-CODE', 'ENV-MSG', 'ENV-DATA'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      outcome: {
        enum: ['success', 'failure'],
        default: 'success',
        description: 'success: code 0, empty message, data that decrypts; failure: a non-zero code with error text',
      },
    },
    required: [],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const response = exchange.response!;
    if (response.status !== 200)
      return [fail(`expected HTTP 200 with an envelope, got ${response.status}: ${preview(response.body)}`)];
    if (response.json === undefined) return [fail(`the body is not JSON: ${preview(response.body)}`)];
    // ENV-DATA: a success (code 0) carries its result in data; none at all (absent, null, "") is that rule's,
    // not the Base64 pattern's. Nothing of the step's result can be read after it.
    const sent = response.json as { code?: unknown; data?: unknown } | null;
    if (
      ctx.params.outcome !== 'failure' &&
      sent !== null &&
      typeof sent === 'object' &&
      String(sent.code) === '0' &&
      (sent.data === undefined || sent.data === null || sent.data === '')
    ) {
      return [
        {
          ...fail(`success (code 0) without data: ${preview(response.body)}`, ['ENV-DATA']),
          cause: 'undecryptable-answer',
        },
      ];
    }
    const issues = validateSchema('Envelope', response.json);
    if (issues.length > 0) {
      // data breaking the Base64 pattern is CRYPTO-ENVELOPE (the spec's shared pattern also names the request rules).
      const dataOnly = issues.every((issue) => issue.path === '/data');
      if (dataOnly)
        return [
          {
            ...fail(`data is not standard Base64: ${describeIssues(issues)}; body ${preview(response.body)}`, [
              'CRYPTO-ENVELOPE',
            ]),
            cause: 'undecryptable-answer',
          },
        ];
      return [
        fail(
          `not a valid envelope: ${describeIssues(issues)}; body ${preview(response.body)}`,
          issueRules(issues.filter((issue) => issue.path !== '/data')) ?? issueRules(issues),
        ),
      ];
    }
    const envelope = response.json as unknown as { code: { valueOf(): unknown }; message: string };
    const code = String(envelope.code);
    if (ctx.params.outcome === 'failure') {
      if (code === '0')
        return [
          fail(
            `expected a failure (non-zero code), got code 0${response.decrypted ? ` with data ${preview(response.decrypted.text)}` : ''}`,
          ),
        ];
      if (envelope.message.length === 0)
        return [
          fail(`failure code ${code} with an empty message (ENV-MSG: message carries the error text)`, ['ENV-MSG']),
        ];
      return [judgedWireForm(response, pass(`code ${code}: ${preview(envelope.message)}`))];
    }
    if (code !== '0') return [fail(`expected success (code 0), got code ${code}: ${preview(envelope.message)}`)];
    if (envelope.message.length > 0)
      return [
        fail(`success (code 0) with a message ${preview(envelope.message)}: ENV-MSG wants it empty`, ['ENV-MSG']),
      ];
    if (response.decryptError) return [undecryptable(response.decryptError)];
    if (!response.decrypted) return [fail('success without data', ['ENV-DATA'])];
    return [judgedWireForm(response, pass(`code 0, data decrypts to ${preview(response.decrypted.text)}`))];
  },
};
