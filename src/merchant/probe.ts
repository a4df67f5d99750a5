import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../core/http-io.js';
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
 * reader costs at most about `pageBytes`; a history is "short" when it fits one page of the
 * largest size, and only a short history is answered in the old form (no query).
 */
export const PROBE_LIMITS = { pageEntries: 500, pageBytes: 256 * 1024, deadlineMs: 10_000 } as const;

/** The parsed query of a probe request: the old form (no paging parameter), or a page. */
type ProbeQuery = { paged: false } | { paged: true; after: number; limit: number };

/** Reads `since` and `limit`; a bad value is one line for a 400. */
export function parseProbeQuery(search: string): ProbeQuery | { error: string } {
  const params = new URLSearchParams(search);
  const since = params.get('since');
  const limit = params.get('limit');
  if (since === null && limit === null) return { paged: false };
  let after = 0;
  if (since !== null && since !== '') {
    if (!/^\d{1,15}$/.test(since)) return { error: `since must be a cursor this probe gave as "next" (digits), not ${JSON.stringify(since.slice(0, 40))}` };
    after = Number(since);
  }
  let size: number = PROBE_LIMITS.pageEntries;
  if (limit !== null) {
    if (!/^\d{1,6}$/.test(limit) || Number(limit) < 1) return { error: `limit must be a whole number from 1 to ${PROBE_LIMITS.pageEntries}, not ${JSON.stringify(limit.slice(0, 40))}` };
    size = Math.min(Number(limit), PROBE_LIMITS.pageEntries);
  }
  return { paged: true, after, limit: size };
}

/** One page after `after`: at most `limit` entries, cut before the byte bound; `more` when entries follow. */
export async function probePage(store: IdempotencyStore, after: number, limit: number): Promise<{ entries: ProcessedEntry[]; more: boolean }> {
  // One entry beyond the page tells whether more follow.
  const fetched = store.processedPage
    ? await store.processedPage(after, limit + 1)
    : (await store.processed()).slice(after, after + limit + 1).map((text, i) => ({ seq: after + i + 1, text }));
  const entries: ProcessedEntry[] = [];
  let bytes = 0;
  for (const entry of fetched.slice(0, limit)) {
    const size = Buffer.byteLength(entry.text) + 1;
    if (entries.length > 0 && bytes + size > PROBE_LIMITS.pageBytes) break;
    entries.push(entry);
    bytes += size;
  }
  return { entries, more: fetched.length > entries.length };
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
 * `next` and `more`), the old form (no query) for a history of one page, 413 beyond it; the token
 * when configured; the whole answer within the deadline, else the connection is cut.
 */
export async function serveProbe(req: IncomingMessage, res: ServerResponse, store: IdempotencyStore, options: ProbeOptions = {}): Promise<void> {
  const deadline = setTimeout(() => {
    // A reader that does not take the answer in time does not keep it in memory.
    if (!res.writableFinished) res.destroy();
  }, options.deadlineMs ?? PROBE_LIMITS.deadlineMs);
  deadline.unref();
  res.once('close', () => clearTimeout(deadline));
  if (!authorised(req, options.token)) {
    return sendJson(res, 401, { errCode: 401, message: 'the probe needs its token: Authorization: Bearer <probe token> (merchant.yaml probe.token)' }, { 'www-authenticate': 'Bearer' });
  }
  const query = parseProbeQuery((req.url ?? '').split('?')[1] ?? '');
  if ('error' in query) return sendJson(res, 400, { errCode: 400, message: `bad probe query: ${query.error}` });
  if (!query.paged) {
    const { entries, more } = await probePage(store, 0, PROBE_LIMITS.pageEntries);
    if (more) {
      return sendJson(res, 413, {
        errCode: 413,
        message: `the history holds more than one page (${PROBE_LIMITS.pageEntries} entries or ${PROBE_LIMITS.pageBytes} bytes): read it in pages, GET /probe?since=0&limit=${PROBE_LIMITS.pageEntries}, then ?since=<next> while "more" is true`,
      });
    }
    // Splice the stored texts: each entry is the decrypted JSON exactly as received, so amounts
    // keep every digit (no parse and re-serialise through floats).
    return sendJson(res, 200, `{"processed":[${entries.map((entry) => entry.text).join(',')}]}`);
  }
  const { entries, more } = await probePage(store, query.after, query.limit);
  const next = entries.at(-1)?.seq ?? query.after;
  return sendJson(res, 200, `{"processed":[${entries.map((entry) => entry.text).join(',')}],"next":"${next}","more":${more}}`);
}
