import { validateSchema } from '../../core/schemas.js';
import { describeIssues, fail, isFinding, lastExchange, pass, preview, type Check } from './check.js';

/** `card-response`: the card close answer has the response shape; `outcome` success or failure. */
export const cardResponseCheck: Check = {
  id: 'card-response',
  title: 'card close response',
  rules: ['CARD-RES'],
  needs: 'exchange',
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const response = exchange.response!;
    if (response.json === undefined) return [fail(`HTTP ${response.status}, body is not JSON: ${preview(response.body)}`)];
    const issues = validateSchema('CardCloseResponse', response.json);
    if (issues.length > 0) return [fail(`HTTP ${response.status}, ${preview(response.body)}: ${describeIssues(issues)}`)];
    const success = (response.json as { success: boolean }).success;
    const wanted = ctx.params.outcome !== 'failure';
    if (success !== wanted) return [fail(`expected success ${wanted}, got ${success}: ${preview(response.body)}`)];
    return [pass(`HTTP ${response.status}, ${preview(response.body)}`)];
  },
};
