import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../platform/package-paths.js';
import type { CallbackTypeTable } from '../spec/callback-types.js';
import type { SpecSource } from '../spec/document.js';
import { generateControlClient } from './codegen/control-client.js';
import { generateMswHandlers } from './codegen/msw-handlers.js';
import { generateValidators } from './codegen/validators.js';
import { benchPage, type BenchResults } from './bench-page.js';
import type { GeneratedFile } from './generated-file.js';
import { generatePactFiles } from './pact/files.js';

/**
 * Every generated file, from the spec (and the benchmark page from bench/results.json): what
 * `npm run generate` writes. Paths are relative to the package root (`src/generated/…`,
 * `spec/pacts/…`). Async because the Pact files are recorded by pact-js (in a throwaway folder); no
 * generator writes into the project. `callbackTypes` names the callback types (default: the
 * built-in table).
 */
export async function generateAll(
  spec: SpecSource,
  options: { callbackTypes?: CallbackTypeTable } = {},
): Promise<GeneratedFile[]> {
  return [
    ...generateValidators(spec),
    ...generateMswHandlers(spec),
    ...generateControlClient(spec),
    ...(await generatePactFiles(spec, options)),
    ...benchFigures(),
  ];
}

/** The benchmark page, from the figures `npm run bench` wrote (none in an installed package, which has no bench/). */
function benchFigures(): GeneratedFile[] {
  const file = join(PACKAGE_ROOT, 'bench', 'results.json');
  return existsSync(file) ? [benchPage(JSON.parse(readFileSync(file, 'utf8')) as BenchResults)] : [];
}
