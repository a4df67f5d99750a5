import { describe, expect, it } from 'vitest';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import {
  answerFailureRule,
  callbackFailureRule,
  familyOf,
  LENIENT_BASE64_REASONS,
  reasonInMessage,
  type CryptoFailureFamily,
} from './crypto-failure.js';
import { describeCryptoFailure } from './crypto-wording.js';

describe('crypto failure classification', () => {
  it.each<
    [CryptoFailureReason | string, CryptoFailureFamily, 'CRYPTO-ENVELOPE' | 'CRYPTO-SAME', 'CB-RAW-BODY' | 'CB-DECRYPT']
  >([
    ['empty', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['data-prefix', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['plus-as-space', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['percent-encoded', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['url-safe-alphabet', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['line-breaks', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['whitespace', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['invalid-character', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['missing-padding', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['bad-base64-length', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['misplaced-padding', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    ['non-canonical-base64', 'base64', 'CRYPTO-ENVELOPE', 'CB-RAW-BODY'],
    // The bytes opened: the answer's data is malformed JSON (CRYPTO-ENVELOPE); a callback's is not a decryptable payload (CB-DECRYPT).
    ['not-utf8', 'plaintext', 'CRYPTO-ENVELOPE', 'CB-DECRYPT'],
    ['not-json', 'plaintext', 'CRYPTO-ENVELOPE', 'CB-DECRYPT'],
    ['ciphertext-length', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['wrong-key', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['padding-mismatch', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['bad-padding', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['corrupted-block', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['plaintext-block-too-large', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
    ['some-other-tool-reason', 'key', 'CRYPTO-SAME', 'CB-DECRYPT'],
  ])('%s: family %s, answer rule %s, callback rule %s', (reason, family, answerRule, callbackRule) => {
    expect(familyOf(reason)).toBe(family);
    expect(answerFailureRule(reason)).toBe(answerRule);
    expect(callbackFailureRule(reason)).toBe(callbackRule);
  });

  it('holds only Base64 reasons as lenient', () => {
    expect([...LENIENT_BASE64_REASONS].sort()).toEqual(['missing-padding', 'non-canonical-base64']);
    for (const reason of LENIENT_BASE64_REASONS) expect(familyOf(reason)).toBe('base64');
  });

  it('writes a failure with its reason in brackets, which reasonInMessage reads back', () => {
    const line = describeCryptoFailure(new CryptoError('missing-padding', "the '=' padding is missing"));
    expect(line).toBe("the '=' padding is missing [missing-padding]");
    expect(reasonInMessage(line)).toBe('missing-padding');
    expect(describeCryptoFailure(new Error('socket hang up'))).toBe('socket hang up');
    expect(reasonInMessage('socket hang up')).toBe('');
    expect(describeCryptoFailure('text')).toBe('text');
    // Only the bracketed reason that ends the message, of the codec's letters, digits and '-'.
    expect(reasonInMessage('bytes are not UTF-8 [not-utf8]')).toBe('not-utf8');
    expect(reasonInMessage('see [wrong-key] above')).toBe('');
    expect(reasonInMessage('[a] then [b]')).toBe('b');
    expect(reasonInMessage('odd [Wrong_Key]')).toBe('');
    expect(reasonInMessage('empty []')).toBe('');
  });
});
