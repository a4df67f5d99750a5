import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { cliReference } from './cli-reference.js';
import { generatedSuitesFile } from './generated-suites.js';
import { PACKAGE_ROOT, SPEC_PATH } from '../platform/package-paths.js';
import type { GeneratedFile } from '../generate/generated-file.js';
import { architectureWithDiagram, type LayerTable } from '../generate/layer-diagram.js';
import { SUITES_DIR } from '../runner/suite.js';
import { withCheckParams } from '../runner/suite-schema.js';
import { loadSpecFile, writeGeneratedFiles } from './io.js';
import { withOptionalPackage } from './optional-package.js';

/**
 * suites/suite.schema.json with every check's parameter schema in it: the checks (src/runner) are
 * the source of the `params-*` definitions, the rest of the file is written by hand.
 */
function suiteSchemaFile(): GeneratedFile {
  const schema = JSON.parse(readFileSync(join(SUITES_DIR, 'suite.schema.json'), 'utf8')) as Record<string, unknown>;
  return { path: 'suites/suite.schema.json', contents: `${JSON.stringify(withCheckParams(schema), null, 2)}\n` };
}

/** ARCHITECTURE.md with its layer diagram written from the lint's table (eslint.config.js, `LAYERS`). */
async function architectureFile(): Promise<GeneratedFile> {
  const config = (await import(pathToFileURL(join(PACKAGE_ROOT, 'eslint.config.js')).href)) as {
    LAYERS: LayerTable['layers'];
    GENERATED_FILE: LayerTable['generatedFile'];
    TYPES_FROM: LayerTable['typesFrom'];
  };
  const text = readFileSync(join(PACKAGE_ROOT, 'ARCHITECTURE.md'), 'utf8');
  return architectureWithDiagram(text, {
    layers: config.LAYERS,
    generatedFile: config.GENERATED_FILE,
    typesFrom: config.TYPES_FROM,
  });
}

/**
 * `generate [--spec F] [--out DIR] [--check]`: regenerate every generated file from the spec, and
 * docs/cli-reference.md from `shipped()`, the program the installed CLI runs. A developer command:
 * only `src/cli/dev.ts` registers it.
 */
export function registerGenerateCommand(program: Command, shipped: () => Promise<Command>): void {
  program
    .command('generate')
    .description(
      'regenerate every generated file (src/generated, spec/pacts, the check parameters in suites/suite.schema.json, docs/cli-reference.md, the layer diagram of ARCHITECTURE.md)',
    )
    .option('--spec <file>', 'OpenAPI spec', SPEC_PATH)
    .option('--out <dir>', 'folder the generated paths are relative to (src/generated/…, spec/pacts/…)', PACKAGE_ROOT)
    .option('--check', 'write nothing; exit 1 when a generated file is missing or stale')
    .action(async (options: { spec: string; out: string; check?: boolean }) => {
      const { generateAll } = await withOptionalPackage(
        '@pact-foundation/pact',
        'generate',
        () => import('../generate/all.js'),
      );
      if (
        writeGeneratedFiles(
          [
            ...(await generateAll(loadSpecFile(options.spec))),
            suiteSchemaFile(),
            generatedSuitesFile(),
            { path: 'docs/cli-reference.md', contents: cliReference(await shipped()) },
            await architectureFile(),
          ],
          options.out,
          options.check,
        ) > 0
      )
        process.exitCode = 1;
    });
}
