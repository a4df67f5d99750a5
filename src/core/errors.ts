/**
 * The toolkit's own failures. Findings about an implementation under test are data, never these;
 * an exception here means the toolkit itself could not do its job (bad flags, unreadable key,
 * unreachable target, broken spec), and the CLI maps every one of them to exit status 2.
 */

/** Prefix of every message meant for a user, so a line in a CI log says where it came from. */
export const MESSAGE_PREFIX = 'wallet-conformance:';

/** Base class of every error the toolkit raises on purpose; anything else is a bug. */
export class WalletConformanceError extends Error {
  /** A stable, machine-readable reason in kebab-case. */
  readonly reason: string;

  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.reason = reason;
  }
}

/** Bad flags, a bad profile, a key that cannot be used as asked. */
export class ConfigError extends WalletConformanceError {}

/** The spec (or a suite) is not what the toolkit needs. */
export class SpecError extends WalletConformanceError {}

/** A target could not be reached or answered outside the protocol. */
export class TransportError extends WalletConformanceError {}

/** Is this one of the toolkit's deliberate errors (as opposed to a bug)? */
export function isWalletConformanceError(error: unknown): error is WalletConformanceError {
  return error instanceof WalletConformanceError;
}
