import { validateSchema } from '../../core/schemas.js';
import { leniencyOf } from '../leniency.js';
import {
  NO_PARAMS,
  describeIssues,
  fail,
  isFinding,
  issueRules,
  lastExchange,
  pass,
  preview,
  type Check,
} from './check.js';

/**
 * `refused`: bad input is not accepted. The interface names no error for it (U-CODES), so a
 * refusal is an HTTP 4xx, or HTTP 200 with a failure envelope (non-zero code, error text). Success,
 * a 5xx (the service broke) or an invalid envelope fail. An acceptance of input no rule obliges a
 * service to refuse (unpadded Base64 the pattern allows, a field a JSON binder coerces: see
 * leniency.ts) is judged under the open point instead: a warning, a failure only under --strict.
 */
export const refusedCheck: Check = {
  id: 'refused',
  title: 'bad input is refused',
  rules: ['ENV-CODE'],
  needs: 'exchange',
  params: NO_PARAMS,
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const response = exchange.response!;
    if (response.status >= 400 && response.status < 500)
      return [pass(`HTTP ${response.status}: ${preview(response.body)}`)];
    if (response.status !== 200)
      return [fail(`HTTP ${response.status} (neither a refusal nor an envelope): ${preview(response.body)}`)];
    if (response.json === undefined) return [fail(`HTTP 200 with a body that is not JSON: ${preview(response.body)}`)];
    const issues = validateSchema('Envelope', response.json);
    if (issues.length > 0) {
      // The answer's data breaking the Base64 pattern is CRYPTO-ENVELOPE: the spec's shared pattern also
      // names the request's rules (ENERGY-DATA, ORDER-DATA), and its anyOf branches (null, "") add nothing.
      const pattern = issues.filter((issue) => issue.path === '/data' && issue.keyword === 'pattern');
      if (pattern.length > 0 && issues.every((issue) => issue.path === '/data')) {
        return [
          fail(
            `HTTP 200 with data that is not standard Base64: ${[...new Set(pattern.map((issue) => issue.message))].join('; ')} [CRYPTO-ENVELOPE]`,
            ['CRYPTO-ENVELOPE'],
          ),
        ];
      }
      const answerSide = issues.filter((issue) => issue.path !== '/data' || issue.keyword !== 'pattern');
      return [
        fail(
          `HTTP 200 with an invalid envelope: ${describeIssues(issues)}`,
          issueRules(answerSide) ?? ['CRYPTO-ENVELOPE'],
        ),
      ];
    }
    const envelope = response.json as unknown as { code: unknown; message: string };
    if (String(envelope.code) === '0') {
      const accepted = `accepted (code 0)${response.decrypted ? `, result ${preview(response.decrypted.text)}` : ''}`;
      const lenient = leniencyOf(exchange.request);
      return [lenient ? fail(`${accepted}; ${lenient.why}`, lenient.rules) : fail(accepted)];
    }
    if (envelope.message.length === 0)
      return [fail(`failure code ${String(envelope.code)} without error text (ENV-MSG)`, ['ENV-MSG'])];
    return [pass(`failure envelope, code ${String(envelope.code)}: ${preview(envelope.message)}`)];
  },
};
