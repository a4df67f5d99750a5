import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeEntriesAfter } from '../src/runner/probe-reader.js';
import { runStorm } from '../src/load/storm.js';
import { summaryLine } from '../src/load/summary.js';
import { ROOT } from './support/cli.js';
import { makeKeyPair } from './support/merchant.js';
import { startPostgres, type PostgresServer } from './support/postgres.js';

const API_KEY = 'multi-instance-key';
const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-multi-'));
let postgres: PostgresServer;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  postgres = await startPostgres();
  writeFileSync(join(dir, 'merchant-public.pem'), keys.pem.publicPem);
  writeFileSync(
    join(dir, 'merchant.yaml'),
    `apiKey: "${API_KEY}"\npublicKey: merchant-public.pem\nstore: "${postgres.url}"\nport: 0\n`,
  );
}, 60_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One reference merchant process (the real CLI) on the shared PostgreSQL; resolves with its port once it listens. */
function startInstance(port = 0): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        resolve(ROOT, 'bin/wallet-conformance.js'),
        'merchant',
        '--config',
        join(dir, 'merchant.yaml'),
        '--port',
        String(port),
      ],
      { env: { ...process.env, NO_COLOR: '1' } },
    );
    children.add(child);
    child.on('exit', () => children.delete(child));
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`instance did not start in 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const listening = /merchant listening on http:\/\/127\.0\.0\.1:(\d+)\/callback/.exec(out);
      if (listening) {
        clearTimeout(timer);
        done({ child, port: Number(listening[1]) });
      }
    });
    child.on('exit', (code) => fail(new Error(`instance exited with ${code}: ${err}`)));
  });
}

describe('three reference merchant processes on one PostgreSQL', () => {
  it('process 1,000 events with 30% duplicates exactly once while one instance is killed with SIGKILL and restarted', async () => {
    const instances = await Promise.all([startInstance(), startInstance(), startInstance()]);
    const urls = instances.map((instance) => `http://127.0.0.1:${instance.port}/callback`);
    let killedAt = 0;
    let restarted: Promise<unknown> | undefined;
    const result = await runStorm({
      callbackUrls: urls,
      apiKey: API_KEY,
      key: keys.privateKey,
      events: 1_000,
      duplicates: 0.3,
      concurrency: 48,
      durationS: 150,
      // A claim held by the killed process stays busy until its 30 s lease ends: retry past it.
      maxAttempts: 20,
      probe: () => probeEntriesAfter({ probeUrl: `http://127.0.0.1:${instances[0]!.port}/probe` }, undefined),
      onDelivery: (done, planned) => {
        if (killedAt === 0 && done >= planned / 2) {
          killedAt = done;
          instances[1]!.child.kill('SIGKILL');
          // Restart on the same port once the old process is gone; deliveries meanwhile fail and are retried.
          restarted = new Promise((resolve) => instances[1]!.child.once('exit', resolve)).then(() =>
            startInstance(instances[1]!.port),
          );
        }
      },
    });
    const back = (await restarted) as { port: number } | undefined;
    expect(killedAt).toBeGreaterThan(0);
    expect(back?.port).toBe(instances[1]!.port);
    expect(summaryLine(result)).toMatch(/^load: 1000 events, 300 duplicate deliveries, processed exactly once: yes, /);
    // Exactly once, and no errCode 0 for an event that is not durably done (it would show processed 0 times).
    expect(result.offenders).toEqual([]);
    expect(result).toMatchObject({ acknowledged: 1_000, unacknowledgedDeliveries: 0, foreignProbeEntries: 0 });
    // The kill was felt: deliveries to the dead instance failed and were retried elsewhere.
    expect(result.retries).toBeGreaterThan(0);
  }, 240_000);
});
