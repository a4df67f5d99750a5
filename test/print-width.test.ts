/**
 * Source lines stay readable side by side: Prettier's print width is at most 120 columns, and
 * `npm run lint` (prettier --check) holds every formatted file to it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

describe('the print width', () => {
  it('is at most 120 columns', () => {
    const config = JSON.parse(readFileSync(join(ROOT, '.prettierrc.json'), 'utf8')) as { printWidth?: number };
    expect(config.printWidth).toBeLessThanOrEqual(120);
  });
});
