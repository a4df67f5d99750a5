import { readFileSync } from 'node:fs';
import { parseExactJson } from '../../src/core/exact-json.js';
import { DEFAULT_PROFILE } from '../../src/core/profile.js';
import { parseKey, type RsaPrivateKey } from '../../src/crypto/keys.js';
import type {
  CheckContext,
  Exchange,
  ReceivedCallback,
  ReceivedResponse,
  StepOutcome,
} from '../../src/runner/observation.js';
import type { Step } from '../../src/runner/suite.js';
import type { MerchantTarget, ServiceTarget, Target } from '../../src/runner/types.js';

/**
 * Hand-made check contexts for the checks' unit tests (src/runner/checks/*.test.ts): a check sees
 * only its CheckContext, so a table of observations → verdicts needs no server and no network.
 */

/** The committed 1024-bit test key pair (test/vectors/keys: public, test-only). */
export const testKeys = parseKey(
  readFileSync(new URL('../vectors/keys/rsa1024-private.pem', import.meta.url), 'utf8'),
) as RsaPrivateKey;

/** A service target: the merchant's public key opens its callbacks. */
export const serviceTarget: ServiceTarget = {
  side: 'service',
  baseUrl: 'http://127.0.0.1:9',
  cardBaseUrl: 'http://127.0.0.1:9',
  apiKey: 'merchant-key-0001',
  publicKey: testKeys.publicKey,
  profile: { ...DEFAULT_PROFILE },
  allowOrders: true,
};

/** A merchant target: the runner seals callbacks with the private key. */
export const merchantTarget: MerchantTarget = {
  side: 'merchant',
  callbackUrl: 'http://127.0.0.1:9/callback',
  apiKey: 'merchant-key-0001',
  privateKey: testKeys,
  profile: { ...DEFAULT_PROFILE },
};

/** An answer with `body`; `json` is parsed from it (exact numbers) unless the body is not JSON. */
export function answer(status: number, body = '', extra: Partial<ReceivedResponse> = {}): ReceivedResponse {
  let json: ReceivedResponse['json'];
  try {
    json = parseExactJson(body);
  } catch {
    json = undefined;
  }
  return { status, headers: {}, body, ...(json === undefined ? {} : { json }), ...extra };
}

/** An answer whose envelope `data` decrypted to `text`. */
export function decryptedAnswer(status: number, body: string, text: string): ReceivedResponse {
  return answer(status, body, { decrypted: { text, value: parseExactJson(text) } });
}

/** One exchange: the request (with its plain text, when given) and the answer, or a transport error. */
export function exchange(
  response: ReceivedResponse | undefined,
  options: { error?: string; plain?: string } = {},
): Exchange {
  return {
    request: {
      method: 'POST',
      url: 'http://127.0.0.1:9/x',
      headers: {},
      body: 'data=AQID',
      ...(options.plain === undefined ? {} : { plain: options.plain }),
    },
    ...(response ? { response } : {}),
    ...(options.error === undefined ? {} : { error: options.error }),
  };
}

/** A callback as the runner's receiver got it. */
export function callback(
  body: string | Buffer,
  headers: Record<string, string> = {},
  answeredStatus = 200,
): ReceivedCallback {
  return {
    at: 0,
    method: 'POST',
    url: '/callback',
    headers,
    body: typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
    answeredStatus,
  };
}

/**
 * The context a check sees after a step: defaults to a service target and no exchanges. `params`
 * are given as a suite holds them after the loader validated them against the check's schema; the
 * context fits any check (`CheckContext<never>`), so a table can feed each check its own.
 */
export function checkContext(
  options: { target?: Target; params?: Record<string, unknown>; outcome?: Partial<StepOutcome>; step?: Step } = {},
): CheckContext<never> {
  return {
    target: options.target ?? serviceTarget,
    suite: { name: 'unit/checks', title: 'unit', side: options.target?.side ?? 'service', cases: [] },
    testCase: { id: 'unit-case', title: 'a unit case', rules: [], steps: [] },
    step: options.step ?? {},
    outcome: { exchanges: [], saved: {}, ...options.outcome },
    params: (options.params ?? {}) as never,
    rules: new Map(),
    strangerKeys: { privateKey: testKeys, publicKey: testKeys.publicKey },
  };
}
