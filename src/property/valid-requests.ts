import { stringifyExact } from '../core/exact-json.js';
import type { Property } from './property.js';
import {
  asSent,
  judgeValidAnswer,
  seal,
  sendData,
  validCases,
  type ServiceCase,
  type ServiceEnv,
} from './service-exchange.js';

/**
 * Property 1: any valid request (plain payload drawn from the spec's schemas and value rules) gets
 * an HTTP 200 envelope whose code 0 carries a decryptable result valid against its schema and
 * echoing the callBackId, or a refusal (non-zero code with a message; a service may refuse a valid
 * order for a business reason); never 5xx, never an undecryptable or unparsable answer.
 *
 * @example validRequests(env).judge({ endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } })
 */
export function validRequests(env: ServiceEnv): Property<ServiceCase> {
  return {
    id: 'valid-requests',
    title: 'Any valid request is answered with a decryptable, schema-valid success or a clean refusal',
    rules: ['ENERGY-RES', 'ORDER-RES', 'ENV-CODE', 'ENV-MSG', 'CRYPTO-ENVELOPE'],
    arbitrary: validCases(env.target),
    async judge(testCase) {
      const sent = asSent(env, testCase);
      const text = stringifyExact(sent);
      const exchange = await sendData(env, testCase.endpoint, seal(env, text), text);
      return judgeValidAnswer(exchange, testCase, sent);
    },
  };
}
