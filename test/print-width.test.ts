/**
 * Source lines stay readable side by side: Prettier's print width is at most 120 columns, and
 * `npm run lint` (prettier --check) holds every formatted file to it. No source file escapes that
 * check through .prettierignore, generated code aside.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { getFileInfo } from 'prettier';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

describe('the print width', () => {
  it('is at most 120 columns', () => {
    const config = JSON.parse(readFileSync(join(ROOT, '.prettierrc.json'), 'utf8')) as { printWidth?: number };
    expect(config.printWidth).toBeLessThanOrEqual(120);
  });

  it('is held by every source file under src/ but the generated ones (.prettierignore exempts no other)', async () => {
    const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) =>
      /\.(ts|mts|cts|js|mjs|cjs)$/.test(file),
    );
    const ignored: string[] = [];
    for (const file of files) {
      const info = await getFileInfo(join(ROOT, 'src', file), { ignorePath: join(ROOT, '.prettierignore') });
      if (info.ignored) ignored.push(file);
    }
    expect(files.length).toBeGreaterThan(100);
    expect(ignored.filter((file) => !file.startsWith(`generated${sep}`))).toEqual([]);
  });
});
