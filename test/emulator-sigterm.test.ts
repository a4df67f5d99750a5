import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJson } from '../src/crypto/codec.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { serveEmulator } from './support/cli.js';

/** Polls `probe` until it holds (bounded). */
async function until(probe: () => boolean | Promise<boolean>, what: string, limitMs = 15_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

describe('emulator process: SIGTERM with a callback under way', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-sigterm-'));
  const held: ServerResponse[] = [];
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      // The first callback hangs (the emulator must not wait for it to stop); later ones are acknowledged.
      if (received.length === 1) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0,"message":""}');
    });
  });
  const children: ChildProcess[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const socket of sockets) socket.destroy();
    receiver.closeAllConnections();
    await new Promise((done) => receiver.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits within 5 s, keeps the delivery pending, and sends it after a restart', { timeout: 90_000 }, async () => {
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
    const { configPath } = initEmulatorDir(dir, { callbackUrl, port: 0 });
    const merchant = loadEmulatorConfig(configPath).merchants[0]!;
    const trackingIdOf = (body: string) =>
      (openJson(body, 'callback', merchant.keyPair.publicKey).value as Record<string, unknown>).trackingId;

    const first = await serveEmulator(['--config', configPath, '--port', '0']);
    children.push(first.child);
    const emitted = await fetch(`${first.url}/__control/merchants/${merchant.userId}/callbacks`, {
      method: 'POST',
      headers: { 'x-control-token': first.token, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 4, retryDelaysMs: [50, 50] }),
    });
    expect(emitted.status).toBe(200);
    const { trackingId } = (await emitted.json()) as { trackingId: string };
    await until(() => received.length === 1, 'the first attempt reaches the receiver');
    // A client holding an idle keep-alive connection must not hold the emulator either.
    const idle = connect(Number(new URL(first.url).port), '127.0.0.1');
    sockets.push(idle);
    await new Promise((done) => idle.once('connect', done));

    const exited = new Promise<number | null>((done) => first.child.once('close', (code) => done(code)));
    first.child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((done) => setTimeout(() => done('still running'), 5_000)),
    ]);
    expect(code, first.output()).toBe(0);
    expect(first.output()).toContain('emulator stopped');
    // The hanging attempt was cut, not left open.
    await until(
      () => held[0]!.destroyed || held[0]!.socket === null || held[0]!.socket.destroyed,
      'the receiver sees the attempt cut',
      2_000,
    );
    expect(trackingIdOf(received[0]!)).toBe(trackingId);

    const second = await serveEmulator(['--config', configPath, '--port', '0']);
    children.push(second.child);
    await until(() => received.length === 2, 'the pending delivery is sent after the restart');
    expect(trackingIdOf(received[1]!)).toBe(trackingId);
    const attempts = async () =>
      (
        (await (
          await fetch(`${second.url}/__control/deliveries?trackingId=${trackingId}`, {
            headers: { 'x-control-token': second.token },
          })
        ).json()) as {
          attempts: Array<Record<string, unknown>>;
        }
      ).attempts;
    await until(async () => (await attempts()).length === 2, 'both attempts are recorded');
    expect((await attempts()).map((a) => [a.verdict, a.error ?? null])).toEqual([
      ['failed', 'cut: the emulator shut down'],
      ['acknowledged', null],
    ]);
    const stopped = new Promise<number | null>((done) => second.child.once('close', (c) => done(c)));
    second.child.kill('SIGTERM');
    expect(await stopped).toBe(0);
    expect(received).toHaveLength(2);
  });
});
