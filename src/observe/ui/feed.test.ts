import http from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testKeys } from '../../../test/support/check-context.js';
import { LosslessNumber } from '../../core/exact-json.js';
import { createScrubber, fingerprint } from '../../secrets/scrub.js';
import { sealCallback } from '../../wire/callback-delivery.js';
import type { ObserveFinding, ObservedExchange } from '../exchange.js';
import { createObserveMetrics } from '../metrics.js';
import { judgeKeys } from '../observed.js';
import { LiveFeed, rememberingScrubber, type FeedOptions } from './feed.js';
import { startLivePage } from './server.js';

/**
 * The live page's feed and server: the ring's bound over a long stream, the event stream (a
 * snapshot, then each exchange and finding), an exchange's payload opened on demand, secrets as
 * fingerprints only, a browser that stops reading dropped (never waited for), /metrics and /healthz.
 */

const SECRET = 'ak_live_0123456789abcdef0123';
const publicKeyPem = testKeys.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString();
const keys = judgeKeys({ publicKeyPem, apiKey: SECRET });
const scrubber = createScrubber([{ kind: 'ak', value: SECRET }]);

function callback(seq: number, path = `/callback?api_key=${SECRET}`): ObservedExchange {
  const body = sealCallback(
    {
      type: new LosslessNumber('4'),
      trackingId: `adr-${seq}`,
      tenantUserId: 'u-1',
      chain: 'TRON',
      address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
      note: SECRET,
    },
    testKeys,
  );
  return {
    v: 1,
    seq,
    kind: 'callback',
    direction: 'service→merchant',
    startedAt: 1_764_000_000_000 + seq,
    endedAt: 1_764_000_000_004 + seq,
    request: {
      method: 'POST',
      path,
      headers: { 'x-api-key': SECRET, 'content-type': 'application/x-www-form-urlencoded' },
      bodyBase64: Buffer.from(body).toString('base64'),
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      bodyBase64: Buffer.from('{"errCode":0}').toString('base64'),
    },
  };
}

function finding(seq: number, rules: string[], status: ObserveFinding['status']): ObserveFinding {
  return {
    id: `observe/seq-${seq}/x`,
    suite: 'observe',
    case: `seq-${seq}`,
    title: 'a check',
    rules,
    status,
    message: `saw ${SECRET}`,
  };
}

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A feed flushed by hand (no timer), and its server on a free loopback port. */
async function served(options: Partial<FeedOptions> = {}) {
  const feed = new LiveFeed({ keys, scrubber, schedule: () => undefined, ...options });
  const server = await startLivePage(feed, createObserveMetrics(), '127.0.0.1', 0);
  closers.push(() => server.close());
  return { feed, url: server.url };
}

/** Reads server-sent events from `/events` until `until` holds for what was read. */
function listen(url: string) {
  const events: Array<{ event: string; data: unknown }> = [];
  let raw = '';
  const waiters: Array<() => void> = [];
  const request = http.get(`${url}/events`, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      raw += chunk;
      for (let end = raw.indexOf('\n\n'); end >= 0; end = raw.indexOf('\n\n')) {
        const block = raw.slice(0, end);
        raw = raw.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (name && data) events.push({ event: name, data: JSON.parse(data) });
      }
      for (const wake of waiters.splice(0)) wake();
    });
  });
  closers.push(() => void request.destroy());
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((wake) => waiters.push(wake));
  };
  return { events, until, text: () => JSON.stringify(events) };
}

describe('the live page feed and server', () => {
  it('sends a snapshot, then each exchange and finding; opens a payload on demand; shows secrets only as fingerprints', async () => {
    const { feed, url } = await served();
    feed.exchange(callback(1));
    feed.flush();
    const page = listen(url);
    await page.until(() => page.events.length >= 1);
    const snapshot = page.events[0]!.data as {
      exchanges: Array<{ seq: number; endpoint: string; path: string }>;
      capacity: number;
    };
    expect(page.events[0]!.event).toBe('snapshot');
    expect(snapshot.capacity).toBe(500);
    expect(snapshot.exchanges.map((row) => [row.seq, row.endpoint])).toEqual([[1, '4 address']]);

    feed.exchange(callback(2));
    feed.findings([
      finding(2, ['CB-ERRCODE'], 'failed'),
      finding(2, ['U-RETRY'], 'warning'),
      finding(2, ['ENV-CODE'], 'passed'),
    ]);
    feed.flush();
    await page.until(() => page.events.length >= 4);
    expect(page.events.slice(1).map((event) => event.event)).toEqual(['exchange', 'finding', 'finding']);
    expect(page.events[2]!.data).toMatchObject({ seq: 2, status: 'failed', rules: ['CB-ERRCODE'] });

    const detail = (await (await fetch(`${url}/api/exchanges/2`)).json()) as {
      request: { headers: Record<string, string>; plaintext: string };
    };
    expect(detail.request.headers['x-api-key']).toBe(fingerprint(SECRET, 'ak'));
    expect(JSON.parse(detail.request.plaintext)).toMatchObject({
      type: 4,
      trackingId: 'adr-2',
      note: fingerprint(SECRET, 'ak'),
    });
    expect((await fetch(`${url}/api/exchanges/99`)).status).toBe(404);

    const again = listen(url);
    await again.until(() => again.events.length >= 1);
    expect(again.events[0]!.data).toMatchObject({
      rules: { 'CB-ERRCODE': { failed: 1, warning: 0 }, 'U-RETRY': { failed: 0, warning: 1 } },
      seen: 2,
    });
    for (const text of [page.text(), again.text(), JSON.stringify(detail)]) expect(text).not.toContain(SECRET);
  });

  it('serves the page, its script and style from its own origin, and /metrics and /healthz', async () => {
    const { url } = await served();
    const html = await fetch(`${url}/`);
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await html.text()).toContain('<script src="app.js" defer></script>');
    expect((await fetch(`${url}/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${url}/app.css`)).status).toBe(200);
    expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok\n');
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('wallet_conformance_observe_exchanges_total');
    expect((await fetch(`${url}/nothing`)).status).toBe(404);
    expect((await fetch(`${url}/`, { method: 'POST' })).status).toBe(405);
  });

  it('drops a browser that stops reading, without waiting for it, and keeps serving the others', async () => {
    const { feed, url } = await served({ clientBufferBytes: 256 * 1024 });
    const { port } = new URL(url);
    // A client that asks for the stream and never reads it.
    const stuck = connect(Number(port), '127.0.0.1');
    stuck.write('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
    stuck.pause();
    closers.push(() => void stuck.destroy());
    const page = listen(url);
    await page.until(() => page.events.length >= 1);
    while (feed.clients < 2) await new Promise((resolve) => setImmediate(resolve));
    let seq = 0;
    const long = `/callback?x=${'p'.repeat(8_000)}`;
    while (feed.dropped === 0) {
      for (let i = 0; i < 200; i++) feed.exchange(callback(++seq, long));
      // Each flush returns at once, whatever the stuck client's socket holds; the reading one takes each batch.
      feed.flush();
      const last = seq;
      await page.until(() => page.events.some((event) => (event.data as { seq?: number }).seq === last));
      expect(seq).toBeLessThan(200_000);
    }
    expect(feed.clients).toBe(1);
    feed.exchange(callback(++seq));
    feed.flush();
    await page.until(() => page.events.some((event) => (event.data as { seq?: number }).seq === seq));
  });

  it('holds at most its capacity and its bytes over a long stream', () => {
    const feed = new LiveFeed({ keys, scrubber, schedule: () => undefined, capacity: 500, maxBytes: 256 * 1024 });
    const one = callback(1);
    for (let seq = 1; seq <= 100_000; seq++) {
      feed.exchange({ ...one, seq });
      if (seq % 1000 === 0) feed.flush();
      if (seq % 10 === 0) feed.findings([finding(seq, ['CB-ERRCODE'], 'failed')]);
    }
    feed.flush();
    const snapshot = feed.snapshot();
    expect(feed.held).toBeLessThanOrEqual(500);
    expect(snapshot.findings.length).toBe(500);
    expect(snapshot.exchanges.at(-1)!.seq).toBe(100_000);
    expect(snapshot.rules['CB-ERRCODE']!.failed).toBe(10_000);
  });
});

describe('the scrubber of rows', () => {
  it('scrubs as the scrubber does, scrubs a repeated path once, and forgets past its bound', () => {
    const asked: string[] = [];
    const counting = { text: (input: string) => (asked.push(input), scrubber.text(input)), value: scrubber.value };
    const rows = rememberingScrubber(counting, 2);
    const secretPath = `/callback?api_key=${SECRET}`;

    expect(rows.text(secretPath)).toBe(scrubber.text(secretPath));
    expect(rows.text(secretPath)).not.toContain(SECRET);
    expect(rows.text(secretPath)).toContain(fingerprint(SECRET, 'ak'));
    expect(asked).toEqual([secretPath]);

    rows.text('/a');
    // A third distinct path: everything remembered is forgotten, so memory stays within the bound.
    rows.text('/b');
    expect(rows.text(secretPath)).not.toContain(SECRET);
    expect(asked).toEqual([secretPath, '/a', '/b', secretPath]);

    // A long path is scrubbed each time, never kept.
    const long = `/callback?api_key=${SECRET}&pad=${'x'.repeat(600)}`;
    expect(rows.text(long)).toBe(rows.text(long));
    expect(rows.text(long)).not.toContain(SECRET);
    expect(asked.filter((input) => input === long)).toHaveLength(3);
  });
});
