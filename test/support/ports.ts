import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';

/**
 * Ports for tests that run beside other tests on one machine. A port found by listening on 0 and
 * closing again is the kernel's next ephemeral port: any other test (or child process) listening on 0
 * may be given it a moment later, and then a target meant to be down answers, or a child cannot bind.
 */

/** A loopback port that refuses connections for as long as the test holds it. */
export interface RefusingPort {
  port: number;
  close: () => Promise<void>;
}

/**
 * A target that is down for the whole test. The port is the local end of a connection this process
 * holds open: nothing listens on it, so a connection to it is refused (ECONNREFUSED, as with any
 * stopped server), and while the connection stays open no other socket can bind it.
 */
export function refusingPort(): Promise<RefusingPort> {
  const peer: Server = createServer();
  return new Promise((done, failed) => {
    peer.once('error', failed);
    peer.listen(0, '127.0.0.1', () => {
      const held = connect((peer.address() as AddressInfo).port, '127.0.0.1');
      held.once('error', failed);
      held.once('connect', () =>
        done({
          port: held.localPort!,
          close: () =>
            new Promise((closed) => {
              held.destroy();
              peer.close(() => closed());
            }),
        }),
      );
    });
  });
}

/** The kernel's ephemeral range (Linux), where `listen(0)` and outgoing connections take their ports. */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const value = Number(low);
    if (Number.isInteger(value) && value > 12_000) return value;
  } catch {
    // not Linux: the range IANA gives for ephemeral ports
  }
  return 49_152;
}

/**
 * Each test worker picks from a slice of its own below the ephemeral range, starting at a random
 * point in it (the machine may run other suites too); a counter keeps one worker's picks apart.
 */
const SLICE = 500;
const sliceStart = ephemeralLow() - SLICE * (1 + ((Number(process.env.VITEST_POOL_ID) || 1) % 20));
let next = Math.floor(Math.random() * SLICE);

function bindable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/**
 * A loopback port for a process the test starts with a fixed port (`--port N`, a config file), or for
 * a server that comes up later. Outside the ephemeral range, so that no `listen(0)` is given it
 * between this check and the bind, and it stays free while that process restarts.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port in ${sliceStart}-${sliceStart + SLICE - 1}`);
}
