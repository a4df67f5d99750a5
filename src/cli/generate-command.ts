import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { PACKAGE_ROOT, SPEC_PATH } from '../core/package-paths.js';
import { parseSpec } from '../generate/spec-document.js';
import { readUserFile, writeUserFile } from './io.js';

/** `generate [--spec F] [--out DIR] [--check]`: regenerate src/generated from the spec. */
export function registerGenerateCommand(program: Command): void {
  program
    .command('generate')
    .description('regenerate every generated file (src/generated, spec/pacts) from the spec')
    .option('--spec <file>', 'OpenAPI spec', SPEC_PATH)
    .option('--out <dir>', 'folder the generated paths are relative to (src/generated/…, spec/pacts/…)', PACKAGE_ROOT)
    .option('--check', 'write nothing; exit 1 when a generated file is missing or stale')
    .action(async (options: { spec: string; out: string; check?: boolean }) => {
      const { generateAll } = await import('../generate/all.js');
      const name = relative(PACKAGE_ROOT, options.spec).startsWith('..') ? options.spec : relative(PACKAGE_ROOT, options.spec);
      const spec = parseSpec(readUserFile(options.spec, 'spec').toString('utf8'), name);
      let stale = 0;
      for (const file of await generateAll(spec)) {
        const target = join(options.out, file.path);
        const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
        if (current === file.contents) {
          process.stdout.write(`fresh  ${target}\n`);
          continue;
        }
        if (options.check) {
          stale++;
          process.stdout.write(`stale  ${target}\n`);
        } else {
          writeUserFile(target, file.contents, { overwrite: true });
          process.stdout.write(`wrote  ${target}\n`);
        }
      }
      if (stale > 0) process.exitCode = 1;
    });
}
