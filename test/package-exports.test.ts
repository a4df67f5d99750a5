import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

describe('the package entry point', () => {
  it('loads from the built package under plain Node and exports the receiver, the crypto and the runner', () => {
    const script = `const m = await import('wallet-conformance');
      process.stdout.write(JSON.stringify(['createCallbackHandler', 'openSqliteStore', 'sealJson', 'openJson', 'validateSchema', 'runSuites', 'idempotencyKey'].map((name) => typeof m[name])));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(Array(7).fill('function'));
  });
});
