import { parseExactJson, stringifyExact, type ExactJson } from '../../core/exact-json.js';
import { validateSchema } from '../../core/schemas.js';
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

/** The exact JSON text of a value; strings compare by their content. */
function text(value: unknown): string {
  if (value === undefined) return '(absent)';
  return typeof value === 'string' ? value : stringifyExact(value);
}

/** The spec's schemas of a decrypted result. */
export const RESULT_SCHEMAS = ['EnergyMaxCountResult', 'OrderResult'] as const;

/** `schema` of the decrypted data; `echo`: result field → request field; `ifAccepted`: skip on a refusal. */
type ResultParams = { schema: (typeof RESULT_SCHEMAS)[number]; echo?: Record<string, string>; ifAccepted?: boolean };

/**
 * `result`: the decrypted envelope data matches `schema`; `echo: {resultField: requestField}`
 * compares each result field with the request's (exact digits; a string "20931" equals 20931 only
 * by text, so the typing is judged by the schema, the value by the echo). With `ifAccepted: true`, a
 * refusal (an HTTP 4xx or a non-zero envelope code) is `skipped`: the case's request rests on an open limit, and only
 * an accepted one has a result to judge.
 */
export const resultCheck: Check<ResultParams> = {
  id: 'result',
  title: 'decrypted result',
  rules: ['ORDER-RES'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      schema: { enum: [...RESULT_SCHEMAS], description: "the spec's schema of the decrypted data" },
      echo: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'result field → the request field whose value it must carry',
      },
      ifAccepted: {
        type: 'boolean',
        description: 'a refusal (non-zero code) is skipped: only an accepted request has a result',
      },
    },
    required: ['schema'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const response = exchange.response!;
    const code = (response.json as { code?: unknown } | undefined)?.code;
    const refusedBy =
      response.status >= 400 && response.status < 500
        ? `HTTP ${response.status}`
        : response.status === 200 && code !== undefined && text(code) !== '0'
          ? `code ${text(code)}`
          : undefined;
    if (ctx.params.ifAccepted === true && refusedBy) {
      return [
        {
          status: 'skipped',
          message: `the service refused the request (${refusedBy}): no result to judge; ${preview(response.body, 80)}`,
        },
      ];
    }
    if (response.decryptError) return [undecryptable(response.decryptError)];
    if (!response.decrypted) {
      // A refusal is a 4xx or a failure envelope; a 5xx is the service failing on a request it had to judge.
      if (response.status >= 500)
        return [
          fail(
            `HTTP ${response.status}: the service failed on the request, which is no refusal: ${preview(response.body)}`,
          ),
        ];
      return [fail(`no encrypted data in the answer: ${preview(response.body)}`)];
    }
    const { schema } = ctx.params;
    const issues = validateSchema(schema, response.decrypted.value);
    if (issues.length > 0)
      return [
        fail(
          `decrypted ${preview(response.decrypted.text)} does not match ${schema}: ${describeIssues(issues)}`,
          issueRules(issues),
        ),
      ];
    const echo = ctx.params.echo ?? {};
    const requestPlain = exchange.request.plain
      ? (parseExactJson(exchange.request.plain) as Record<string, unknown>)
      : {};
    const result = response.decrypted.value as Record<string, ExactJson>;
    for (const [resultField, requestField] of Object.entries(echo)) {
      const want = text(requestPlain[requestField]);
      const got = text(result[resultField]);
      if (want !== got)
        return [fail(`result ${resultField} is ${got}, expected the request's ${requestField} ${want}`)];
    }
    return [pass(`decrypted ${preview(response.decrypted.text)}`)];
  },
};
