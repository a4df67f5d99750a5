import { describe, expect, it } from 'vitest';
import { WalletConformanceError } from '../core/errors.js';
import { CryptoError } from './errors.js';

describe('CryptoError', () => {
  it('carries its reason, its message, its name and its cause', () => {
    const cause = new Error('inner');
    const error = new CryptoError('wrong-key', 'block 1 of 1: no known padding', { cause });
    expect(error).toBeInstanceOf(WalletConformanceError);
    expect([error.name, error.reason, error.message, error.cause]).toEqual([
      'CryptoError',
      'wrong-key',
      'block 1 of 1: no known padding',
      cause,
    ]);
  });
});
