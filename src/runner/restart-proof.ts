import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunSession } from '../net/run-session.js';
import { runShellCommand } from './probe-reader.js';
import { transportOf } from './transport.js';
import type { MerchantTarget, PreflightStep } from './types.js';

/** After the command returns, how long a receiver that restarts in the background has to go down. */
const GRACE_MS = 2000;
/** How long the receiver has to answer again. */
const BACK_MS = 30_000;

/** Opens a TCP connection; resolves with it, or undefined when refused or not answered within `ms`. */
function open(host: string, port: number, ms: number): Promise<Socket | undefined> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      done(undefined);
    }, ms);
    socket.once('connect', () => {
      clearTimeout(timer);
      done(socket);
    });
    socket.once('error', () => {
      clearTimeout(timer);
      socket.destroy();
      done(undefined);
    });
  });
}

/** Asks the callback URL until it answers HTTP (`answered HTTP n`) or BACK_MS have passed (`no answer: …`). */
async function answerAgain(target: MerchantTarget): Promise<string> {
  const backBy = Date.now() + BACK_MS;
  for (;;) {
    try {
      const answer = await transportOf(target).send({
        method: 'GET',
        url: target.callbackUrl,
        headers: {},
        timeoutMs: 2000,
      });
      return `answered HTTP ${answer.status}`;
    } catch (error) {
      const back = `no answer: ${(error as Error).message}`;
      if (Date.now() > backBy) return back;
      await sleep(200);
    }
  }
}

/**
 * Proves that `--restart CMD` restarts the receiver: it must go down (a connection opened before
 * the command is closed by the receiver, or a new connection is refused, while the command runs or
 * within 2 s after it) and come back (the callback URL answers HTTP again within 30 s). A command
 * that restarts nothing (`true`, a typo'd service name that exits 0) goes down nowhere: the
 * step's level says so and pre-flight ends the run (exit 2). An in-process restart hook (the
 * toolkit's own tests) is not proven here. `session` is the network session of the run to come.
 */
export async function proveRestart(
  target: MerchantTarget,
  session: RunSession,
): Promise<{ proven: boolean; step: PreflightStep }> {
  const url = new URL(target.callbackUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const what = `running --restart once, holding a connection to ${url.host} open and connecting again every 50 ms`;
  const held = await open(host, port, 2000);
  let heldClosed = false;
  held?.once('close', () => (heldClosed = true));
  held?.on('error', () => undefined);
  let refused = 0;
  let polls = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const socket = await open(host, port, 500);
      polls++;
      if (socket) socket.destroy();
      else refused++;
      await sleep(50);
    }
  })();
  // The receiver goes away on purpose: a refused connection now is not "the target stopped answering".
  for (const origin of [url.origin, ...(target.probeUrl ? [new URL(target.probeUrl).origin] : [])])
    session.forget(origin);
  const started = Date.now();
  let failure: string | undefined;
  try {
    await runShellCommand(target.restartCmd!, '--restart', 120_000);
  } catch (error) {
    failure = (error as Error).message;
  }
  const ran = Date.now() - started;
  const down = () => heldClosed || refused > 0;
  const graceEnd = Date.now() + GRACE_MS;
  while (!down() && Date.now() < graceEnd && !failure) await sleep(50);
  const back = failure ? 'not tried' : await answerAgain(target);
  polling = false;
  await poller;
  held?.destroy();
  const observed = `the command ${failure ? failure : `ran ${ran} ms`}; ${held ? `the held connection ${heldClosed ? 'was closed by the receiver' : 'stayed open'}` : 'no connection could be held before it'}; ${refused} of ${polls} connection attempts refused; afterwards the callback URL ${back}`;
  if (failure)
    return { proven: false, step: { what, observed, conclusion: `--restart failed: ${failure}`, level: 'warning' } };
  if (!down())
    return {
      proven: false,
      step: {
        what,
        observed,
        conclusion: `--restart did not restart the receiver: it never went down (no connection closed or refused while the command ran or ${GRACE_MS / 1000} s after); the command must stop the receiver and start it again`,
        level: 'warning',
      },
    };
  if (!back.startsWith('answered'))
    return {
      proven: false,
      step: {
        what,
        observed,
        conclusion: `--restart stopped the receiver but it did not come back within ${BACK_MS / 1000} s`,
        level: 'warning',
      },
    };
  return {
    proven: true,
    step: { what, observed, conclusion: 'the receiver went down and came back: --restart restarts it', level: 'ok' },
  };
}
