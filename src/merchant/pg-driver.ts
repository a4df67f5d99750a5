import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Pg from 'pg';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';

let driver: typeof Pg | undefined;

/**
 * The `pg` package, an optional peer dependency (like msw and @pact-foundation/pact): loaded the
 * first time a PostgreSQL store is opened, so the CLI, the library and every SQLite or in-memory
 * store work without it. Missing, it is one line naming the package and the range to install.
 */
export function pgDriver(): typeof Pg {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)('pg') as typeof Pg;
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: string; message?: string };
    if (code !== 'MODULE_NOT_FOUND' || !String(message).includes("'pg'")) throw error;
    throw new ConfigError(
      'missing-package',
      `a PostgreSQL store (store: postgres://...) needs the optional package pg, which is not installed: npm install '${pgSpec()}'`,
    );
  }
  return driver;
}

/** pg with the range package.json asks for. */
function pgSpec(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
    };
    const range = manifest.peerDependencies?.pg;
    return range ? `pg@${range}` : 'pg';
  } catch {
    return 'pg';
  }
}
