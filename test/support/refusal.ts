import { expect } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';

/**
 * Runs `run` and returns the ConfigError it throws as `[reason, message]` (the one line a user sees
 * and the reason it is filed under); undefined when it does not throw. Any other throw fails the test.
 */
export function refusal(run: () => unknown): [string, string] | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [(error as ConfigError).reason, (error as Error).message];
  }
  return undefined;
}
