import { validateSchema } from '../../core/schemas.js';
import { describeIssues, fail, isFinding, issueRules, lastExchange, pass, preview, type Check } from './check.js';

/** `outcome`: success (the default), failure, or any (the shape alone is judged). */
type CardResponseParams = { outcome?: 'success' | 'failure' | 'any' };

/**
 * `card-response`: the card close answer has the response shape (any HTTP status: card close's are
 * not shown, U-CARD-VALUES); `outcome` success, failure, or `any` (the shape alone is judged).
 */
export const cardResponseCheck: Check<CardResponseParams> = {
  id: 'card-response',
  title: 'card close response',
  rules: ['CARD-RES'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      outcome: {
        enum: ['success', 'failure', 'any'],
        default: 'success',
        description: 'the success the answer must report; any: the response shape alone is judged',
      },
    },
    required: [],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const response = exchange.response!;
    // The toolkit sends no credential on card close (U-CARD-AUTH: not shown): a service that wants one
    // answers 401/403, and then nothing about the close itself can be judged.
    if (response.status === 401 || response.status === 403) {
      return [
        {
          status: 'skipped',
          message: `card close answered HTTP ${response.status}: it needs an authentication the interface does not show (U-CARD-AUTH), and the toolkit sends none; ${preview(response.body, 80)}`,
        },
      ];
    }
    if (response.json === undefined)
      return [fail(`HTTP ${response.status}, body is not JSON: ${preview(response.body)}`, ['CARD-RES'])];
    const issues = validateSchema('CardCloseResponse', response.json);
    const failed = (response.json as { success?: unknown }).success === false;
    // A failure's missing fields break CARD-ERR; a success's, CARD-RES.
    // One malformed answer is one failure: a second card-response check of the step is skipped.
    if (issues.length > 0)
      return [
        {
          ...fail(
            `HTTP ${response.status}, ${preview(response.body)}: ${describeIssues(issues)}`,
            failed ? ['CARD-ERR'] : issueRules(issues)?.filter((rule) => rule !== 'CARD-ERR'),
          ),
          cause: 'malformed-card-response',
        },
      ];
    const success = (response.json as { success: boolean }).success;
    if (ctx.params.outcome === 'any')
      return [pass(`HTTP ${response.status}, success ${success}: ${preview(response.body)}`)];
    const wanted = ctx.params.outcome !== 'failure';
    if (success !== wanted) return [fail(`expected success ${wanted}, got ${success}: ${preview(response.body)}`)];
    return [pass(`HTTP ${response.status}, ${preview(response.body)}`)];
  },
};
