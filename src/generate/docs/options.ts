import type { CryptoProfile } from '../../core/profile.js';
import type { RsaPrivateKey } from '../../crypto/keys.js';
import type { RsaEngine } from '../../crypto/rsa-engine.js';
import type { CallbackTypeTable } from '../../spec/callback-types.js';
import type { ManualFile } from './manual-pages.js';

/** A registered check, as the docs need it (the runner's CHECKS registry fits). */
export interface DocsCheck {
  id: string;
  title: string;
  rules: readonly string[];
}

/** A suite, as the docs need it (the runner's loadSuites() result fits). */
export interface DocsSuite {
  name: string;
  title: string;
  side: string;
  cases: ReadonlyArray<{
    id: string;
    title: string;
    rules: readonly string[];
    steps: ReadonlyArray<{ expect?: ReadonlyArray<{ check: string; rules?: readonly string[] }> }>;
  }>;
}

/** A non-zero envelope code of an implementation (the interface names none: U-CODES). */
interface DocsBusinessCode {
  code: number | string;
  name: string;
}

/** A card close errorCode of an implementation (U-CODES, U-CARD-VALUES). */
interface DocsCardError {
  errorCode: string;
  name: string;
  errorMessage: string;
  errorMessageEn: string;
}

/** The demo key pair that encrypts the examples, and how. */
export interface DemoCrypto {
  /** A private key carries its public half: both halves are used, as the profile says. */
  key: RsaPrivateKey;
  profile?: CryptoProfile;
  /** The RSA engine (inject one for reproducible padding bytes); node:crypto by default. */
  engine?: RsaEngine;
}

/** What generateDocs needs besides the spec, the rule catalog and the suites. */
export interface DocsOptions {
  checks: readonly DocsCheck[];
  demo: DemoCrypto;
  /** The emulator's business codes, shown as its choice where the interface is silent (U-CODES). */
  businessCodes?: readonly DocsBusinessCode[];
  /** The emulator's card close errorCodes (U-CODES). */
  cardErrors?: readonly DocsCardError[];
  /** The reference merchant's idempotency key, shown for each callback example. */
  idempotencyKey?: (payload: Record<string, unknown>) => string;
  /** The callback types' names (default: the built-in table). */
  callbackTypes?: CallbackTypeTable;
  /** The manual (README.md, docs/**), rendered beside the reference; none by default. */
  manual?: readonly ManualFile[];
}
