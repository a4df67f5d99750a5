// What a bundler loads for ./node-codec.js under the package's `browser` field: the handlers'
// lazy default codec becomes the node-forge one, so node:crypto never enters a page bundle.
export { forgeCodec as nodeCodec } from './forge-codec.js';
