import type { SpecSource } from './spec-document.js';
import { generateValidators, type GeneratedFile } from './validators.js';

/** Every generated file of `src/generated`, from the spec alone: what `npm run generate` writes. */
export function generateAll(spec: SpecSource): GeneratedFile[] {
  return [...generateValidators(spec)];
}
