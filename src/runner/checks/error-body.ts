import { validateSchema } from '../../core/schemas.js';
import { describeIssues, fail, isFinding, issueRules, lastExchange, pass, preview, type Check } from './check.js';

/** The spec's schemas of an HTTP error body. */
export const ERROR_SCHEMAS = ['ErrorBody', 'UnauthorizedError', 'ForbiddenError', 'NotFoundError'] as const;

/** `schema`: the spec's schema the body must match. */
type ErrorBodyParams = { schema: (typeof ERROR_SCHEMAS)[number] };

/**
 * The endpoints whose HTTP error bodies the interface leaves open (U-CODES: order submission and card
 * close): ERR-401/403 fix the energy query's bodies; on these a different body only warns.
 */
const OPEN_ERROR_BODIES = new Set(['order', 'card']);

/** The HTTP status each error body belongs to: under another status the body is not that error's. */
const STATUS_OF: Partial<Record<(typeof ERROR_SCHEMAS)[number], number>> = {
  UnauthorizedError: 401,
  ForbiddenError: 403,
  NotFoundError: 404,
};

/**
 * `error-body`: the HTTP error body is JSON matching `schema` (UnauthorizedError, ForbiddenError,
 * NotFoundError). The schema's rules (ERR-401, ...) are named only where they bind: on the order
 * and card endpoints a mismatch is U-CODES, whatever the expectation is labelled.
 */
export const errorBodyCheck: Check<ErrorBodyParams> = {
  id: 'error-body',
  title: 'HTTP error body',
  rules: ['ERR-401'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: { schema: { enum: [...ERROR_SCHEMAS], description: "the spec's schema of the error body" } },
    required: ['schema'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const { schema } = ctx.params;
    const response = exchange.response!;
    const status = STATUS_OF[schema];
    // Another status is the status check's verdict; the body of an error that was not answered is not judged.
    if (status !== undefined && response.status !== status)
      return [
        {
          status: 'skipped',
          message: `HTTP ${response.status}, not ${status}: no ${schema} body to judge (the status is judged on its own): ${preview(response.body, 80)}`,
        },
      ];
    const open = OPEN_ERROR_BODIES.has(ctx.step.request?.endpoint ?? '') ? ['U-CODES'] : undefined;
    const where = open ? ' (the error bodies of order submission and card close are open, U-CODES)' : '';
    if (response.json === undefined) return [fail(`the body is not JSON: ${preview(response.body)}${where}`, open)];
    const issues = validateSchema(schema, response.json);
    return [
      issues.length === 0
        ? pass(`body ${preview(response.body)}`)
        : fail(
            `body ${preview(response.body)} does not match ${schema}: ${describeIssues(issues)}${where}`,
            open ?? issueRules(issues),
          ),
    ];
  },
};
