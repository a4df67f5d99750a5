// The public API of wallet-conformance: named exports only (ARCHITECTURE.md: `src/index.ts`, the one barrel).
export {
  DEFAULT_PROFILE,
  resolveProfile,
  parseProfileYaml,
  type CryptoProfile,
  type Direction,
  type Padding,
} from './core/profile.js';
export { parseExactJson, stringifyExact, LosslessNumber, type ExactJson } from './core/exact-json.js';
export { validateSchema, isSchemaName, type SchemaIssue, type SchemaName } from './core/schemas.js';
export { WalletConformanceError, ConfigError, SpecError, TransportError } from './core/errors.js';
export { parseKey, type RsaKey, type RsaPrivateKey, type RsaPublicKey } from './crypto/keys.js';
export { sealJson, openJson, sealBytes, openBytes } from './crypto/codec.js';
export { CryptoError } from './crypto/errors.js';
export { generateMerchantKeyPair } from './crypto/key-pair.js';
export {
  createCallbackHandler,
  createCallbackReceiver,
  serveCallback,
  type CallbackHandlerOptions,
} from './merchant/callback-handler.js';
export { ManualScheduler, gate, settle } from './core/manual-scheduler.js';
export { realScheduler, type Scheduler } from './core/scheduler.js';
export { expressCallback, fastifyCallback } from './merchant/adapters.js';
export { idempotencyKey } from './merchant/idempotency.js';
export { MemoryIdempotencyStore } from './merchant/memory-store.js';
export { openSqliteStore } from './merchant/sqlite-store.js';
export { openPostgresStore } from './merchant/postgres-store.js';
export type { IdempotencyStore, ClaimResult, StoreTransaction } from './merchant/store.js';
export { startMerchantServer, type MerchantServer, type MerchantServerConfig } from './merchant/server.js';
export { runSuites, type RunEvent, type RunOptions } from './runner/engine.js';
export { loadSuites, parseSuite, type Suite } from './runner/suite.js';
export type { Report, CheckResult, Target, ServiceTarget, MerchantTarget } from './runner/types.js';
