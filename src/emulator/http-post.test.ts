import { Agent as HttpAgent, createServer } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { realScheduler } from '../core/scheduler.js';
import { startPost, type PostAgents, type PostHandle } from './http-post.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Agents with one socket per target, so a second request has to wait for it. */
function oneSocket(): PostAgents {
  const http = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
  const agents = { http, https, destroy: () => (http.destroy(), https.destroy()) };
  cleanup.push(() => agents.destroy());
  return agents;
}

/** A receiver that answers each request after `delayMs` (never, when undefined), counting what arrived. */
async function receiver(delayMs: number | undefined): Promise<{ url: string; arrived: () => number }> {
  let arrived = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived++;
      if (delayMs !== undefined) setTimeout(() => res.end('{"errCode":0}'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`, arrived: () => arrived };
}

/** Starts a POST that goes out as soon as it is on a socket. */
function post(url: string, agents: PostAgents, timeoutMs: number, socketWaitMs: number): PostHandle {
  const handle: PostHandle = startPost(url, {}, 'body', {
    agents,
    timeoutMs,
    socketWaitMs,
    limit: 1024,
    timers: realScheduler,
    onSocket: () => handle.release(true),
  });
  return handle;
}

/** Starts a POST that waits for `release` once it is on a socket; settles with it then. */
async function heldOnSocket(url: string, agents: PostAgents, timeoutMs: number): Promise<PostHandle> {
  let onSocket!: () => void;
  const socketReached = new Promise<void>((resolve) => (onSocket = resolve));
  const handle = startPost(url, {}, 'body', {
    agents,
    timeoutMs,
    socketWaitMs: 5_000,
    limit: 1024,
    timers: realScheduler,
    onSocket: () => onSocket(),
  });
  await socketReached;
  return handle;
}

describe("startPost: the deadline runs from the socket, a wait for one is not the receiver's time", () => {
  it('does not charge the wait for a socket to the receiver', async () => {
    const side = await receiver(500);
    const agents = oneSocket();
    // The second request waits about 500 ms for the only socket, then gets its answer in 500 ms: 1 s in all, over its 900 ms deadline.
    const [first, second] = [post(side.url, agents, 900, 5_000), post(side.url, agents, 900, 5_000)];
    expect(await first.done).toMatchObject({ status: 200, sent: true });
    expect(await second.done).toMatchObject({ status: 200, sent: true });
    expect(side.arrived()).toBe(2);
  });

  it('drops a request that waited too long for a socket as not sent, never as timed out', async () => {
    const side = await receiver(undefined);
    const agents = oneSocket();
    const hanging = post(side.url, agents, 5_000, 5_000);
    const waiting = post(side.url, agents, 5_000, 200);
    const outcome = await waiting.done;
    expect(outcome).toMatchObject({ status: 0, sent: false });
    expect(outcome.error).toMatch(/^not sent: no free connection to http:\/\/127\.0\.0\.1:\d+ within 200 ms$/);
    hanging.abort('test over');
    expect(await hanging.done).toMatchObject({ status: 0, sent: true, error: 'cut: test over' });
    expect(side.arrived()).toBe(1);
  });

  it('writes nothing until released, and nothing at all when the release is refused', async () => {
    const side = await receiver(0);
    const agents = oneSocket();
    const handle = await heldOnSocket(side.url, agents, 5_000);
    handle.release(false, 'not sent: already acknowledged');
    expect(await handle.done).toMatchObject({ status: 0, sent: false, error: 'not sent: already acknowledged' });
    // A request that did go out afterwards is the only one the receiver saw.
    expect(await post(side.url, agents, 5_000, 5_000).done).toMatchObject({ status: 200, sent: true });
    expect(side.arrived()).toBe(1);
  });
});

describe("startPost: the deadline runs from the release, the caller's count is not the receiver's time", () => {
  it('does not time out a request released long after it got its socket', async () => {
    const side = await receiver(0);
    const handle = await heldOnSocket(side.url, oneSocket(), 300);
    // Held for longer than the whole deadline (as a slow outbox write would), then let out: the receiver answers at once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    handle.release(true);
    expect(await handle.done).toMatchObject({ status: 200, sent: true });
    expect(side.arrived()).toBe(1);
  });
});
