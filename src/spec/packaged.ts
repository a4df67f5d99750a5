import { readFileSync } from 'node:fs';
import { SPEC_PATH } from '../platform/package-paths.js';
import { parseSpec, type SpecSource } from './document.js';

let packaged: SpecSource | undefined;

/** The spec shipped with the package (spec/wallet-api.yaml), read and parsed once. */
export function packagedSpec(): SpecSource {
  packaged ??= parseSpec(readFileSync(SPEC_PATH, 'utf8'));
  return packaged;
}
