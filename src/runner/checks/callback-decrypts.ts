import { validateSchema } from '../../core/schemas.js';
import { describeIssues, isFinding, pass, fail, preview, type Check } from './check.js';
import { callbacksOf, openCallback } from './callback-support.js';

/** `callback-decrypts`: each body decrypts with the merchant's public key to a valid payload of the emitted type. */
export const callbackDecryptsCheck: Check = {
  id: 'callback-decrypts',
  title: 'callback decrypts with the public key',
  rules: ['CB-DECRYPT', 'CRYPTO-SAME'],
  needs: 'callbacks',
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks, target } = collected;
    for (const [i, callback] of callbacks.entries()) {
      const opened = openCallback(callback, target);
      if ('error' in opened) return [fail(`delivery ${i + 1} does not decrypt with the public key: ${opened.error}`)];
      const issues = validateSchema('CallbackPayload', opened.value);
      if (issues.length > 0) return [fail(`delivery ${i + 1} payload ${preview(opened.text)}: ${describeIssues(issues)}`)];
      const type = ctx.step.emit?.type;
      if (type !== undefined && String(opened.value.type) !== String(type)) return [fail(`delivery ${i + 1} has type ${String(opened.value.type)}, the event emitted was type ${type}`)];
      const fields = (ctx.params.fields ?? {}) as Record<string, string>;
      for (const [field, want] of Object.entries(fields)) {
        const got = opened.value[field];
        if (got === undefined || String(got) !== String(want)) return [fail(`delivery ${i + 1}: ${field} is ${got === undefined ? 'absent' : String(got)}, expected ${want} exactly`)];
      }
    }
    return [pass(`${callbacks.length} deliveries decrypt to valid payloads`)];
  },
};
