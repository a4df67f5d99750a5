import { generateMswHandlers } from './msw-handlers.js';
import { generatePactFiles } from './pact-files.js';
import type { SpecSource } from './spec-document.js';
import { generateValidators, type GeneratedFile } from './validators.js';

/**
 * Every generated file, from the spec alone: what `npm run generate` writes. Paths are relative to
 * the package root (`src/generated/…`, `spec/pacts/…`). Async because the Pact files are recorded
 * by pact-js (in a throwaway folder); no generator writes into the project.
 */
export async function generateAll(spec: SpecSource): Promise<GeneratedFile[]> {
  return [...generateValidators(spec), ...generateMswHandlers(spec), ...(await generatePactFiles(spec))];
}
