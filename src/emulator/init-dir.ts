import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { emulatorSetupFiles, type SetupOptions } from './init-files.js';

/** The one writer of files in src/emulator (`emulator init`). */

/**
 * Writes a ready emulator setup into `dir` (see {@link emulatorSetupFiles}); refuses to overwrite
 * existing files unless `force`.
 *
 * @example initEmulatorDir('emu').configPath // '<abs>/emu/emulator.yaml'
 */
export function initEmulatorDir(
  dir: string,
  options: SetupOptions & { force?: boolean } = {},
): { configPath: string; files: string[] } {
  const root = resolve(dir);
  const files = emulatorSetupFiles(options);
  try {
    mkdirSync(root, { recursive: true });
  } catch (error) {
    throw new ConfigError(
      'unwritable-file',
      `cannot create ${root}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  if (!options.force) {
    // Check every file first: a half-written setup (new key, old config) would be worse than none.
    const existing = files.map((file) => join(root, file.name)).find((path) => existsSync(path));
    if (existing) throw new ConfigError('file-exists', `${existing} exists already (use --force to overwrite)`);
  }
  const written: string[] = [];
  for (const file of files) {
    const path = join(root, file.name);
    try {
      writeFileSync(path, file.contents, { flag: options.force ? 'w' : 'wx', mode: file.mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new ConfigError('file-exists', `${path} exists already (use --force to overwrite)`);
      throw new ConfigError('unwritable-file', `cannot write ${path}: ${code ?? (error as Error).message}`);
    }
    written.push(path);
  }
  return { configPath: join(root, 'emulator.yaml'), files: written };
}
