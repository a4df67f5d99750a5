import { isSchemaName, validateSchema } from '../../core/schemas.js';
import { describeIssues, fail, isFinding, issueRules, lastExchange, pass, preview, type Check } from './check.js';

/** `error-body`: the HTTP error body is JSON matching `schema` (UnauthorizedError, ForbiddenError, NotFoundError). */
export const errorBodyCheck: Check = {
  id: 'error-body',
  title: 'HTTP error body',
  rules: ['ERR-401'],
  needs: 'exchange',
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const schema = String(ctx.params.schema);
    if (!isSchemaName(schema)) return [fail(`suite error: ${schema} is not a schema of the spec`)];
    const response = exchange.response!;
    if (response.json === undefined) return [fail(`the body is not JSON: ${preview(response.body)}`)];
    const issues = validateSchema(schema, response.json);
    return [issues.length === 0 ? pass(`body ${preview(response.body)}`) : fail(`body ${preview(response.body)} does not match ${schema}: ${describeIssues(issues)}`, issueRules(issues))];
  },
};
