import { BASE64_PATTERN } from '../../crypto/base64.js';
import { isFinding, pass, fail, preview, type Check, NO_PARAMS } from './check.js';
import { callbacksOf } from './callback-support.js';

/** `callback-raw-body`: every delivery's body is the Base64 text itself, not a form field `data=`. */
export const callbackRawBodyCheck: Check = {
  id: 'callback-raw-body',
  title: 'callback body is raw Base64',
  rules: ['CB-RAW-BODY'],
  needs: 'callbacks',
  params: NO_PARAMS,
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks } = collected;
    for (const [i, callback] of callbacks.entries()) {
      const body = callback.body.toString('utf8');
      // The body cannot be decrypted either: later callback checks of the step are skipped (one cause, one failure).
      if (body.startsWith('data='))
        return [
          {
            ...fail(`delivery ${i + 1} sends a form field data=… instead of the raw body: ${preview(body, 60)}`, [
              'CB-RAW-BODY',
            ]),
            cause: 'undecryptable-callback',
          },
        ];
      if (!BASE64_PATTERN.test(body))
        return [
          {
            ...fail(`delivery ${i + 1} body is not strict Base64 text: ${preview(body, 60)}`, ['CB-RAW-BODY']),
            cause: 'undecryptable-callback',
          },
        ];
    }
    return [pass(`${callbacks.length} deliveries, raw Base64 bodies`)];
  },
};
