import type { SpecSource } from './spec-document.js';
import { generateValidators, type GeneratedFile } from './validators.js';

/**
 * Every generated file, from the spec alone: what `npm run generate` writes. Paths are relative to
 * the package root (`src/generated/…`, `spec/pacts/…`). Async so a generator may drive a library
 * that works asynchronously; none may touch the file system.
 */
export async function generateAll(spec: SpecSource): Promise<GeneratedFile[]> {
  return [...generateValidators(spec)];
}
