/**
 * The spec model: spec/wallet-api.yaml loaded once (exact numbers), its refs, operations and
 * webhooks, and the callback type table. Every reader of spec/ goes through here.
 */
export * from './callback-types.js';
export * from './document.js';
export * from './model.js';
export * from './packaged.js';
