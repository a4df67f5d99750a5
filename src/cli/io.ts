import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';
import { parseProfileYaml, DEFAULT_PROFILE, type CryptoProfile } from '../core/profile.js';
import { parseKey, type RsaKey } from '../crypto/keys.js';
import type { KeyHalf } from '../core/profile.js';
import { parseSpec, type SpecSource } from '../spec/document.js';
import type { GeneratedFile } from '../generate/generated-file.js';

/** Reads a file for the user, turning ENOENT and friends into one clear line. */
export function readUserFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw unreadable(error, path, what);
  }
}

function unreadable(error: unknown, path: string, what: string): ConfigError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EISDIR'
        ? 'is a directory'
        : code === 'EACCES'
          ? 'permission denied'
          : (code ?? 'unreadable');
  return new ConfigError('unreadable-file', `cannot read ${what} ${path}: ${why}`);
}

/** Checks that a file can be opened for reading, without reading it (a capture may be larger than memory). */
export function checkReadableFile(path: string, what: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  } catch (error) {
    throw unreadable(error, path, what);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Loads a key file of the expected half. */
export function loadKeyFile(path: string, expect: KeyHalf): RsaKey {
  return parseKey(readUserFile(path, `${expect} key`), { source: path, expect });
}

/** Loads `--profile F`, or the default profile. */
export function loadProfile(path: string | undefined): CryptoProfile {
  if (path === undefined) return { ...DEFAULT_PROFILE };
  return parseProfileYaml(readUserFile(path, 'profile').toString('utf8'), path);
}

/** Reads all of standard input as bytes. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Writes a file, creating its folder; refuses to overwrite unless asked. */
export function writeUserFile(
  path: string,
  contents: string | Uint8Array,
  options: { overwrite?: boolean; mode?: number } = {},
): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    if (options.overwrite) {
      // Written beside and renamed over: a reader (a dashboard, a CI step, observe's own rewrites
      // while it runs) sees the old file or the new one, never half of one.
      const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
      writeFileSync(temporary, contents, { mode: options.mode ?? 0o644 });
      renameSync(temporary, path);
    } else writeFileSync(path, contents, { flag: 'wx', mode: options.mode ?? 0o644 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ConfigError('file-exists', `${path} exists already (use --force to overwrite)`);
    throw new ConfigError('unwritable-file', `cannot write ${path}: ${code ?? (error as Error).message}`);
  }
}

/** Reads and parses `--spec F`; inside the package, the spec is named by its relative path (as in generated headers). */
export function loadSpecFile(path: string): SpecSource {
  const inPackage = relative(PACKAGE_ROOT, path);
  return parseSpec(readUserFile(path, 'spec').toString('utf8'), inPackage.startsWith('..') ? path : inPackage);
}

/**
 * Writes generated files under `out`, one `fresh`/`wrote`/`stale` line each; with `check`, writes
 * nothing. Returns how many are stale (the caller's exit status).
 */
export function writeGeneratedFiles(files: readonly GeneratedFile[], out: string, check = false): number {
  let stale = 0;
  for (const file of files) {
    const target = join(out, file.path);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
    if (current === file.contents) {
      process.stdout.write(`fresh  ${target}\n`);
    } else if (check) {
      stale++;
      process.stdout.write(`stale  ${target}\n`);
    } else {
      writeUserFile(target, file.contents, { overwrite: true });
      process.stdout.write(`wrote  ${target}\n`);
    }
  }
  return stale;
}
