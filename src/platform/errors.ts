// The key ring (api-keys.ts) names its errors from beside it: they are the core's errors.
export { ConfigError } from '../core/errors.js';
