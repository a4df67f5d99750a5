import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../platform/http-io.js';
import type { IdempotencyStore, ProcessedEntry } from './store.js';

/** How the reference merchant serves `GET /probe` (merchant.yaml's `probe:`). */
export interface ProbeOptions {
  /** When set, the probe answers only requests carrying `Authorization: Bearer <token>` (else 401). */
  token?: string;
  /** The whole answer must be written within this many ms, else the connection is cut (default 10 s). */
  deadlineMs?: number;
}

/**
 * The bounds of one probe answer (docs/probe.md). A page holds at most `pageEntries` entries and
 * stops before `pageBytes` of entry text (but always holds one entry), so an answer held by a slow
 * reader costs at most about `pageBytes`. A history is "short" when it fits `shortEntries` entries
 * and `shortBytes` (1 MiB, the most an unpaged answer may carry): only a short history is answered
 * whole to a request without a query; a longer one gets 413, so a reader cannot hold it all at once.
 */
export const PROBE_LIMITS = {
  pageEntries: 500,
  pageBytes: 256 * 1024,
  shortEntries: 10_000,
  shortBytes: 1024 * 1024,
  deadlineMs: 10_000,
} as const;

/** The parsed query of a probe request: unpaged (no paging parameter), or a page. */
type ProbeQuery = { paged: false } | { paged: true; after: number; limit: number };

/** Reads `since` and `limit`; a bad value is one line for a 400. */
export function parseProbeQuery(search: string): ProbeQuery | { error: string } {
  const params = new URLSearchParams(search);
  const since = params.get('since');
  const limit = params.get('limit');
  if (since === null && limit === null) return { paged: false };
  let after = 0;
  if (since !== null && since !== '') {
    if (!/^\d{1,15}$/.test(since))
      return {
        error: `since must be a cursor this probe gave as "next" (digits), not ${JSON.stringify(since.slice(0, 40))}`,
      };
    after = Number(since);
  }
  let size: number = PROBE_LIMITS.pageEntries;
  if (limit !== null) {
    if (!/^\d{1,6}$/.test(limit) || Number(limit) < 1)
      return {
        error: `limit must be a whole number from 1 to ${PROBE_LIMITS.pageEntries}, not ${JSON.stringify(limit.slice(0, 40))}`,
      };
    size = Math.min(Number(limit), PROBE_LIMITS.pageEntries);
  }
  return { paged: true, after, limit: size };
}

/**
 * One page after `after`: at most `limit` entries, cut before `maxBytes` of entry text (one entry at
 * least); `more` when entries follow. Read from the store in chunks, so a long history is never
 * loaded for one answer.
 */
async function probePage(
  store: IdempotencyStore,
  after: number,
  limit: number,
  maxBytes: number = PROBE_LIMITS.pageBytes,
): Promise<{ entries: ProcessedEntry[]; more: boolean }> {
  const entries: ProcessedEntry[] = [];
  let bytes = 0;
  let cursor = after;
  for (;;) {
    // One entry beyond what is still wanted tells whether more follow.
    const want = Math.min(limit - entries.length, PROBE_LIMITS.pageEntries) + 1;
    const fetched = store.processedPage
      ? await store.processedPage(cursor, want)
      : (await store.processed()).slice(cursor, cursor + want).map((text, i) => ({ seq: cursor + i + 1, text }));
    for (const entry of fetched) {
      const size = Buffer.byteLength(entry.text) + 1;
      if (entries.length >= limit || (entries.length > 0 && bytes + size > maxBytes)) return { entries, more: true };
      entries.push(entry);
      bytes += size;
    }
    if (fetched.length < want) return { entries, more: false };
    cursor = entries.at(-1)!.seq;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Does the request carry the probe's token? Compared in constant time, over digests. */
function authorised(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const header = req.headers.authorization ?? '';
  const given = /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * Serves `GET /probe` (docs/probe.md): paged with `?since=<cursor>&limit=<n>` (the answer carries
 * `next` and `more`), the whole history unpaged (no query) while it is short, 413 beyond it; the token
 * when configured; the whole answer within the deadline, else the connection is cut.
 */
export async function serveProbe(
  req: IncomingMessage,
  res: ServerResponse,
  store: IdempotencyStore,
  options: ProbeOptions = {},
): Promise<void> {
  const deadline = setTimeout(() => {
    // A reader that does not take the answer in time does not keep it in memory.
    if (!res.writableFinished) res.destroy();
  }, options.deadlineMs ?? PROBE_LIMITS.deadlineMs);
  deadline.unref();
  res.once('close', () => clearTimeout(deadline));
  if (!authorised(req, options.token)) {
    return sendJson(
      res,
      401,
      {
        errCode: 401,
        message: 'the probe needs its token: Authorization: Bearer <probe token> (merchant.yaml probe.token)',
      },
      { 'www-authenticate': 'Bearer' },
    );
  }
  const query = parseProbeQuery((req.url ?? '').split('?')[1] ?? '');
  if ('error' in query) return sendJson(res, 400, { errCode: 400, message: `bad probe query: ${query.error}` });
  if (!query.paged) {
    const { entries, more } = await probePage(store, 0, PROBE_LIMITS.shortEntries, PROBE_LIMITS.shortBytes);
    if (more) {
      return sendJson(res, 413, {
        errCode: 413,
        message: `the history is longer than the old form answers (${PROBE_LIMITS.shortEntries} entries or ${PROBE_LIMITS.shortBytes} bytes): read it in pages, GET /probe?since=0&limit=${PROBE_LIMITS.pageEntries}, then ?since=<next> while "more" is true`,
      });
    }
    // Splice the stored texts: each entry is the decrypted JSON exactly as received, so amounts
    // keep every digit (no parse and re-serialise through floats).
    return sendJson(res, 200, `{"processed":[${entries.map((entry) => entry.text).join(',')}]}`);
  }
  const { entries, more } = await probePage(store, query.after, query.limit);
  const next = entries.at(-1)?.seq ?? query.after;
  return sendJson(
    res,
    200,
    `{"processed":[${entries.map((entry) => entry.text).join(',')}],"next":"${next}","more":${more}}`,
  );
}
