import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root: this file sits in `src/platform/` or `dist/platform/` below it. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The spec that is the single source of truth. */
export const SPEC_PATH = resolve(PACKAGE_ROOT, 'spec', 'wallet-api.yaml');

/** The rule catalog as data. */
export const RULES_PATH = resolve(PACKAGE_ROOT, 'spec', 'rules.yaml');
