import type { IncomingMessage, ServerResponse } from 'node:http';

/** Default request body limit of the reference servers (64 KiB). */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/** A body read to the end, or the reason it was not. */
type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted'; received: number };

/**
 * Reads a request body as raw bytes, never as a parsed form: a '+' stays a '+' (CB-RAW-BODY).
 * Stops reading past `limit` bytes so an oversized body cannot exhaust memory.
 */
export function readBody(req: IncomingMessage, limit = DEFAULT_BODY_LIMIT): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve({ ok: false, reason: 'too-large', received: 0 });
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      received += chunk.length;
      if (received > limit) {
        req.removeAllListeners('data');
        req.resume();
        finish({ ok: false, reason: 'too-large', received });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish({ ok: true, body: Buffer.concat(chunks) }));
    req.on('aborted', () => finish({ ok: false, reason: 'aborted', received }));
    req.on('error', () => finish({ ok: false, reason: 'aborted', received }));
  });
}

/** Sends a JSON answer with an exact body (already serialised when a string). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}
