import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';

/** The optional peer dependencies: each is loaded only by the commands that need it. */
type OptionalPackage = 'msw' | '@pact-foundation/pact' | '@redocly/openapi-core';

/** The version range package.json asks for, so the message says exactly what to install. */
function peerRange(name: OptionalPackage): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
    };
    return manifest.peerDependencies?.[name];
  } catch {
    return undefined;
  }
}

/** Did loading fail because `name` itself is not installed (not because of something inside it)? */
export function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`'${name}/`));
}

/**
 * Loads a module of the toolkit that imports an optional peer package; when that package is not
 * installed, one line that names it and the command that needs it (exit 2), never a stack trace.
 *
 * @example const { verifyPacts } = await withOptionalPackage('@pact-foundation/pact', 'pact verify', () => import('../generate/pact/verifier.js'));
 */
export async function withOptionalPackage<T>(
  name: OptionalPackage,
  command: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isMissingPackage(error, name)) throw error;
    const range = peerRange(name);
    throw new ConfigError(
      'missing-package',
      `${command} needs the optional package ${name}, which is not installed: npm install --save-dev ${range ? `'${name}@${range}'` : name}`,
    );
  }
}
