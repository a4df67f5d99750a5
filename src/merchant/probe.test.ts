import { afterEach, describe, expect, it } from 'vitest';
import { testKeys } from '../../test/support/check-context.js';
import { MemoryIdempotencyStore } from './memory-store.js';
import { parseProbeQuery, PROBE_LIMITS } from './probe.js';
import { startMerchantServer, type MerchantServer } from './server.js';

/** A store holding `count` processed events, each `{"n":i,"pad":"…"}` of about `size` bytes. */
async function storeWith(count: number, size = 40): Promise<MemoryIdempotencyStore> {
  const store = new MemoryIdempotencyStore();
  for (let i = 0; i < count; i++) {
    const text = `{"n":${i},"pad":"${'x'.repeat(Math.max(0, size - 20))}"}`;
    const claim = await store.claim(`k${i}`, text);
    if (claim.state !== 'claimed') throw new Error('not claimed');
    await store.complete(`k${i}`, claim.token);
  }
  return store;
}

let merchant: MerchantServer | undefined;
afterEach(async () => {
  await merchant?.close();
  merchant = undefined;
});

async function serve(store: MemoryIdempotencyStore, token?: string): Promise<MerchantServer> {
  merchant = await startMerchantServer({
    apiKeys: ['k'],
    publicKey: testKeys.publicKey,
    store,
    ...(token ? { probe: { token } } : {}),
  });
  return merchant;
}

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const numbers = (body: Record<string, unknown>) => (body.processed as Array<{ n: number }>).map((entry) => entry.n);

describe('GET /probe: paged, unpaged for a short history', () => {
  it('answers a request without a query with the whole history while the history is short', async () => {
    const server = await serve(await storeWith(3));
    const response = await fetch(server.probeUrl);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      '{"processed":[{"n":0,"pad":"xxxxxxxxxxxxxxxxxxxx"},{"n":1,"pad":"xxxxxxxxxxxxxxxxxxxx"},{"n":2,"pad":"xxxxxxxxxxxxxxxxxxxx"}]}',
    );
  });

  it('answers an unpaged request with 413 and the way to page once the history passes 10,000 entries or 1 MiB', async () => {
    const long = await serve(await storeWith(PROBE_LIMITS.shortEntries + 1));
    const { status, body } = await get(long.probeUrl);
    expect(status).toBe(413);
    expect(body.message).toMatch(
      /longer than the old form answers \(10000 entries or 1048576 bytes\): read it in pages, GET \/probe\?since=0&limit=500, then \?since=<next> while "more" is true/,
    );
    await merchant!.close();
    expect((await get((await serve(await storeWith(PROBE_LIMITS.shortEntries))).probeUrl)).status).toBe(200);
    await merchant!.close();
    expect((await get((await serve(await storeWith(11, 100 * 1024))).probeUrl)).status).toBe(413);
  });

  it('pages with since and limit: next is the cursor to continue from, more says whether entries follow', async () => {
    const server = await serve(await storeWith(5));
    const first = await get(`${server.probeUrl}?since=0&limit=2`);
    expect([numbers(first.body), first.body.next, first.body.more]).toEqual([[0, 1], '2', true]);
    const second = await get(`${server.probeUrl}?since=${String(first.body.next)}&limit=2`);
    expect([numbers(second.body), second.body.next, second.body.more]).toEqual([[2, 3], '4', true]);
    const last = await get(`${server.probeUrl}?since=4&limit=2`);
    expect([numbers(last.body), last.body.next, last.body.more]).toEqual([[4], '5', false]);
    // Past the end: nothing, and the same cursor back.
    const after = await get(`${server.probeUrl}?since=5`);
    expect([numbers(after.body), after.body.next, after.body.more]).toEqual([[], '5', false]);
  });

  it('cuts a page before its byte bound (always one entry), so one answer stays small however large the entries', async () => {
    const server = await serve(await storeWith(4, 100 * 1024));
    const page = await get(`${server.probeUrl}?limit=500`);
    expect([numbers(page.body), page.body.next, page.body.more]).toEqual([[0, 1], '2', true]);
  });

  it.each([
    ['since=abc', 'since must be a cursor this probe gave as "next" (digits), not "abc"'],
    ['limit=0', 'limit must be a whole number from 1 to 500, not "0"'],
    ['limit=-3', 'limit must be a whole number from 1 to 500, not "-3"'],
  ])('refuses ?%s with 400 and one line', async (query, message) => {
    const server = await serve(await storeWith(1));
    expect(await get(`${server.probeUrl}?${query}`)).toEqual({
      status: 400,
      body: { errCode: 400, message: `bad probe query: ${message}` },
    });
  });

  it('caps limit at the largest page', () => {
    expect(parseProbeQuery('limit=100000')).toEqual({ paged: true, after: 0, limit: PROBE_LIMITS.pageEntries });
    expect(parseProbeQuery('')).toEqual({ paged: false });
  });
});

describe('GET /probe: the token, when merchant.yaml sets probe.token', () => {
  it('answers 401 without the token or with a wrong one, and the list with it', async () => {
    const server = await serve(await storeWith(1), 'probe-secret-token-1234');
    expect((await get(server.probeUrl)).status).toBe(401);
    expect((await get(server.probeUrl, { authorization: 'Bearer probe-secret-token-123' })).status).toBe(401);
    const refused = await get(`${server.probeUrl}?since=0`, { authorization: 'Basic probe-secret-token-1234' });
    expect(refused).toEqual({
      status: 401,
      body: {
        errCode: 401,
        message: 'the probe needs its token: Authorization: Bearer <probe token> (merchant.yaml probe.token)',
      },
    });
    const allowed = await get(`${server.probeUrl}?since=0`, { authorization: 'Bearer probe-secret-token-1234' });
    expect([allowed.status, numbers(allowed.body)]).toEqual([200, [0]]);
  });

  it('needs no token when none is configured', async () => {
    const server = await serve(await storeWith(1));
    expect((await get(server.probeUrl)).status).toBe(200);
  });
});
