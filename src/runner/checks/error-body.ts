import { validateSchema } from '../../core/schemas.js';
import { describeIssues, fail, isFinding, issueRules, lastExchange, pass, preview, type Check } from './check.js';

/** The spec's schemas of an HTTP error body. */
export const ERROR_SCHEMAS = ['ErrorBody', 'UnauthorizedError', 'ForbiddenError', 'NotFoundError'] as const;

/** `schema`: the spec's schema the body must match. */
export type ErrorBodyParams = { schema: (typeof ERROR_SCHEMAS)[number] };

/** `error-body`: the HTTP error body is JSON matching `schema` (UnauthorizedError, ForbiddenError, NotFoundError). */
export const errorBodyCheck: Check<ErrorBodyParams> = {
  id: 'error-body',
  title: 'HTTP error body',
  rules: ['ERR-401'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: { schema: { enum: [...ERROR_SCHEMAS], description: 'the spec\'s schema of the error body' } },
    required: ['schema'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const { schema } = ctx.params;
    const response = exchange.response!;
    if (response.json === undefined) return [fail(`the body is not JSON: ${preview(response.body)}`)];
    const issues = validateSchema(schema, response.json);
    return [issues.length === 0 ? pass(`body ${preview(response.body)}`) : fail(`body ${preview(response.body)} does not match ${schema}: ${describeIssues(issues)}`, issueRules(issues))];
  },
};
