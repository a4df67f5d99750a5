import { mediaType } from '../../platform/http-io.js';
import { isFinding, pass, fail, type Check, NO_PARAMS } from './check.js';
import { callbacksOf } from './callback-support.js';

/** `callback-headers`: Content-Type form-urlencoded and X-API-KEY = the merchant's own key. */
export const callbackHeadersCheck: Check = {
  id: 'callback-headers',
  title: 'callback headers',
  rules: ['CB-HEADERS', 'CB-KEY-SAME'],
  needs: 'callbacks',
  params: NO_PARAMS,
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks, target } = collected;
    for (const [i, callback] of callbacks.entries()) {
      const type = mediaType(callback.headers['content-type']);
      if (type !== 'application/x-www-form-urlencoded')
        return [
          fail(
            `delivery ${i + 1}: Content-Type is ${JSON.stringify(callback.headers['content-type'] ?? null)}, expected application/x-www-form-urlencoded`,
            ['CB-HEADERS'],
          ),
        ];
      const key = callback.headers['x-api-key'];
      if (key === undefined) return [fail(`delivery ${i + 1}: no X-API-KEY header`, ['CB-HEADERS', 'AUTH-KEY'])];
      if (key !== target.apiKey)
        return [fail(`delivery ${i + 1}: X-API-KEY is not the merchant's own credential`, ['CB-KEY-SAME', 'AUTH-KEY'])];
    }
    return [pass(`${callbacks.length} deliveries with both headers`)];
  },
};
