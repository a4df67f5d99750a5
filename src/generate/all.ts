import type { CallbackTypeTable } from '../spec/callback-types.js';
import type { SpecSource } from '../spec/document.js';
import { generateControlClient } from './codegen/control-client.js';
import { generateMswHandlers } from './codegen/msw-handlers.js';
import { generateValidators } from './codegen/validators.js';
import type { GeneratedFile } from './generated-file.js';
import { generatePactFiles } from './pact/files.js';

/**
 * Every generated file, from the spec alone: what `npm run generate` writes. Paths are relative to
 * the package root (`src/generated/…`, `spec/pacts/…`). Async because the Pact files are recorded
 * by pact-js (in a throwaway folder); no generator writes into the project. `callbackTypes` names
 * the callback types (default: the built-in table).
 */
export async function generateAll(spec: SpecSource, options: { callbackTypes?: CallbackTypeTable } = {}): Promise<GeneratedFile[]> {
  return [...generateValidators(spec), ...generateMswHandlers(spec), ...generateControlClient(spec), ...(await generatePactFiles(spec, options))];
}
