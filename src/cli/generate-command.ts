import type { Command } from 'commander';
import { PACKAGE_ROOT, SPEC_PATH } from '../core/package-paths.js';
import { loadSpecFile, writeGeneratedFiles } from './io.js';
import { withOptionalPackage } from './optional-package.js';

/** `generate [--spec F] [--out DIR] [--check]`: regenerate every generated file from the spec. */
export function registerGenerateCommand(program: Command): void {
  program
    .command('generate')
    .description('regenerate every generated file (src/generated, spec/pacts) from the spec')
    .option('--spec <file>', 'OpenAPI spec', SPEC_PATH)
    .option('--out <dir>', 'folder the generated paths are relative to (src/generated/…, spec/pacts/…)', PACKAGE_ROOT)
    .option('--check', 'write nothing; exit 1 when a generated file is missing or stale')
    .action(async (options: { spec: string; out: string; check?: boolean }) => {
      const { generateAll } = await withOptionalPackage('@pact-foundation/pact', 'generate', () => import('../generate/all.js'));
      if (writeGeneratedFiles(await generateAll(loadSpecFile(options.spec)), options.out, options.check) > 0) process.exitCode = 1;
    });
}
