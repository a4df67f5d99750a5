import { describe, expect, it } from 'vitest';
import { createScrubber, fingerprint } from '../secrets/scrub.js';
import {
  CaptureWriter,
  captureLine,
  captureLines,
  parseCaptureLine,
  readCapture,
  type CaptureSink,
} from './capture.js';
import type { ObservedExchange } from './exchange.js';

const API_KEY = 'sk_live_0123456789abcdef';
const BODY = Buffer.from('data=AbC+/x==').toString('base64');

function exchange(overrides: Partial<ObservedExchange> = {}): ObservedExchange {
  return {
    v: 1,
    seq: 1,
    kind: 'energy',
    direction: 'merchant→service',
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_000_003,
    request: {
      method: 'POST',
      path: '/api/v1/api/order/getEnergyMaxCount',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/x-www-form-urlencoded' },
      bodyBase64: BODY,
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      bodyBase64: Buffer.from('{"code":0}').toString('base64'),
    },
    ...overrides,
  };
}

async function* linesOf(text: string): AsyncGenerator<string> {
  for (const line of text.split('\n')) yield line;
}

async function readAll(text: string, secrets: { apiKey?: string } = {}): Promise<ObservedExchange[]> {
  const out: ObservedExchange[] = [];
  for await (const item of readCapture(linesOf(text), 'cap.jsonl', secrets)) out.push(item);
  return out;
}

describe('captureLine', () => {
  it('keeps the body byte for byte and shows secret headers only as fingerprints', () => {
    const line = captureLine(
      exchange({
        request: {
          method: 'POST',
          path: '/card/close',
          headers: { 'x-api-key': API_KEY, authorization: 'Bearer tok_abcdef123456', 'x-trace': `echo ${API_KEY}` },
          bodyBase64: BODY,
        },
      }),
      createScrubber([{ kind: 'ak', value: API_KEY }]),
    );
    expect(line.endsWith('\n')).toBe(true);
    expect(line).not.toContain(API_KEY);
    expect(line).not.toContain('tok_abcdef123456');
    const parsed = parseCaptureLine(line);
    expect(parsed.request.bodyBase64).toBe(BODY);
    expect(parsed.request.headers['x-api-key']).toBe(fingerprint(API_KEY, 'ak'));
    expect(parsed.request.headers.authorization).toBe(`Bearer ${fingerprint('tok_abcdef123456', 'au')}`);
    expect(parsed.request.headers['x-trace']).toBe(`echo ${fingerprint(API_KEY, 'ak')}`);
  });

  it('scrubs secrets in the request path in every rendering, and tokens by their form', () => {
    const renderings = [
      API_KEY,
      encodeURIComponent(`${API_KEY}/`),
      Buffer.from(API_KEY).toString('base64'),
      Buffer.from(API_KEY).toString('hex'),
      Buffer.from(API_KEY).toString('hex').toUpperCase(),
      API_KEY.toUpperCase(),
    ];
    const path = `/cb/${API_KEY}?${renderings.map((text, i) => `r${i}=${text}`).join('&')}&access_token=tok_unconfigured_9f8e7d`;
    const line = captureLine(
      exchange({ request: { ...exchange().request, path } }),
      createScrubber([{ kind: 'ak', value: API_KEY }]),
    );
    const parsed = parseCaptureLine(line);
    for (const text of [...renderings, 'tok_unconfigured_9f8e7d']) expect(line).not.toContain(text);
    expect(parsed.request.path.startsWith(`/cb/${fingerprint(API_KEY, 'ak')}?r0=`)).toBe(true);
    // Without a scrubber the path still loses what is a secret by its form.
    expect(
      parseCaptureLine(
        captureLine(exchange({ request: { ...exchange().request, path: '/cb?token=tok_unconfigured_9f8e7d' } })),
      ).request.path,
    ).toBe(`/cb?token=${fingerprint('tok_unconfigured_9f8e7d', 'qt')}`);
  });

  it('fingerprints a wrong API key too (it may be another real key)', () => {
    const parsed = parseCaptureLine(
      captureLine(exchange({ request: { ...exchange().request, headers: { 'x-api-key': 'someone-elses-key' } } })),
    );
    expect(parsed.request.headers['x-api-key']).toBe(fingerprint('someone-elses-key', 'ak'));
  });
});

describe('readCapture', () => {
  it('gives back the configured key where its fingerprint stands, and only there', async () => {
    const text =
      captureLine(exchange()) +
      captureLine(exchange({ seq: 2, request: { ...exchange().request, headers: { 'x-api-key': 'wrong-key' } } }));
    const [first, second] = await readAll(text, { apiKey: API_KEY });
    expect(first!.request.headers['x-api-key']).toBe(API_KEY);
    expect(second!.request.headers['x-api-key']).toBe(fingerprint('wrong-key', 'ak'));
    // Without the key, fingerprints stay.
    expect((await readAll(text))[0]!.request.headers['x-api-key']).toBe(fingerprint(API_KEY, 'ak'));
  });

  it('skips blank lines and keeps an upstream failure without a response', async () => {
    const failed = exchange({
      seq: 3,
      kind: 'callback',
      direction: 'service→merchant',
      upstreamError: { message: 'ECONNREFUSED', gatewayStatus: 502 },
    });
    delete failed.response;
    const all = await readAll(`${captureLine(exchange())}\n\n${captureLine(failed)}\n`);
    expect(all.map((item) => item.seq)).toEqual([1, 3]);
    expect(all[1]!.upstreamError).toEqual({ message: 'ECONNREFUSED', gatewayStatus: 502 });
  });

  /** Reads `chunks` as a file's bytes would arrive, through the capture's own line splitter. */
  async function readBytes(
    chunks: string[],
    options: { maxBytes?: number; warnings?: string[] } = {},
  ): Promise<ObservedExchange[]> {
    async function* bytes(): AsyncGenerator<Buffer> {
      for (const chunk of chunks) yield Buffer.from(chunk);
    }
    const out: ObservedExchange[] = [];
    const lines = captureLines(bytes(), options.maxBytes);
    for await (const item of readCapture(lines, 'cap.jsonl', { onWarning: (line) => options.warnings?.push(line) }))
      out.push(item);
    return out;
  }

  it('skips a last line cut short (a kill while writing) with a warning, and reads the lines before it', async () => {
    const second = captureLine(exchange({ seq: 2 }));
    const warnings: string[] = [];
    const all = await readBytes([captureLine(exchange()), second.slice(0, 40)], { warnings });
    expect(all.map((item) => item.seq)).toEqual([1]);
    expect(warnings).toEqual([
      'cap.jsonl:2: the last line is cut short (observe stopped while writing it): skipped, the lines before it are read',
    ]);
    // A whole last line without its newline is read; a bad line that did end is still refused.
    expect((await readBytes([captureLine(exchange()), second.trimEnd()])).map((item) => item.seq)).toEqual([1, 2]);
    await expect(readBytes([captureLine(exchange()), `${second.slice(0, 40)}\n`])).rejects.toThrow(
      /^cap\.jsonl:2: not JSON/,
    );
  });

  it('reads a line holding a body of 8 MiB, split across chunks anywhere (multi-byte text included)', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 7).toString('base64');
    const line = captureLine(exchange({ request: { ...exchange().request, path: '/é€', bodyBase64: big } }));
    const chunks = [line.slice(0, 5), line.slice(5, 1_000_001), line.slice(1_000_001)];
    const [read] = await readBytes(chunks);
    expect(read!.request.bodyBase64).toBe(big);
    expect(read!.request.path).toBe('/é€');
  });

  it('refuses a line past the longest it reads with one line naming it', async () => {
    await expect(readBytes([captureLine(exchange()), 'x'.repeat(3000), '\n'], { maxBytes: 1024 })).rejects.toThrow(
      /^cap\.jsonl:2: a line longer than 1024 bytes is not a capture line observe writes$/,
    );
  });

  const good = JSON.parse(captureLine(exchange())) as Record<string, unknown>;
  it.each([
    ['{not json', /^cap\.jsonl:2: not JSON/],
    ['[1,2]', /^cap\.jsonl:2: a line must be one JSON object/],
    [JSON.stringify({ ...good, v: 2 }), /^cap\.jsonl:2: v must be 1/],
    [JSON.stringify({ ...good, seq: 0 }), /^cap\.jsonl:2: seq must be a whole number from 1/],
    [JSON.stringify({ ...good, seq: 1 }), /^cap\.jsonl:2: seq 1 does not follow 1/],
    [
      JSON.stringify({ ...good, seq: 2, kind: 'order' }),
      /^cap\.jsonl:2: kind must be one of energy, withdraw, card-close, callback, other, not "order"/,
    ],
    [JSON.stringify({ ...good, seq: 2, direction: 'up' }), /^cap\.jsonl:2: direction must be one of/],
    [JSON.stringify({ ...good, seq: 2, endedAt: 1 }), /^cap\.jsonl:2: endedAt is before startedAt/],
    [
      JSON.stringify({ ...good, seq: 2, request: { ...(good.request as object), bodyBase64: 'a b' } }),
      /^cap\.jsonl:2: request\.bodyBase64 is not standard, padded Base64/,
    ],
    [
      JSON.stringify({ ...good, seq: 2, request: { ...(good.request as object), bodyBase64: 'YQ' } }),
      /^cap\.jsonl:2: request\.bodyBase64 is not standard, padded Base64/,
    ],
    [
      JSON.stringify({ ...good, seq: 2, request: { ...(good.request as object), headers: { 'X-Api-Key': 'k' } } }),
      /^cap\.jsonl:2: request\.headers\.X-Api-Key: header names are lower-case/,
    ],
    [
      JSON.stringify({ ...good, seq: 2, request: { ...(good.request as object), path: 'http://x/' } }),
      /^cap\.jsonl:2: request\.path must be a path starting with \//,
    ],
    [
      JSON.stringify({ ...good, seq: 2, response: { ...(good.response as object), status: 42 } }),
      /^cap\.jsonl:2: response\.status must be a whole number from 100 to 599/,
    ],
    [
      JSON.stringify({ ...good, seq: 2, response: undefined }),
      /^cap\.jsonl:2: an exchange has a response or an upstreamError/,
    ],
    [
      JSON.stringify({ ...good, seq: 2, upstreamError: { message: 'x', gatewayStatus: 500 } }),
      /^cap\.jsonl:2: upstreamError\.gatewayStatus must be 502 or 504/,
    ],
  ])('refuses a bad line with file:line: %s', async (line, message) => {
    await expect(readAll(`${captureLine(exchange())}${line}\n`)).rejects.toThrow(message);
  });
});

describe('CaptureWriter', () => {
  it('writes one line per exchange and drops (and counts) lines while the sink is behind its bound', async () => {
    const chunks: string[] = [];
    let backlog = 0;
    const sink: CaptureSink = {
      write: (chunk) => (chunks.push(chunk), true),
      get writableLength() {
        return backlog;
      },
      end: (callback) => callback(),
    };
    const writer = new CaptureWriter(sink, undefined, { maxBufferedBytes: 100 });
    writer.write(exchange());
    backlog = 101;
    writer.write(exchange({ seq: 2 }));
    backlog = 0;
    writer.write(exchange({ seq: 3 }));
    await writer.close();
    expect(chunks.map((chunk) => parseCaptureLine(chunk).seq)).toEqual([1, 3]);
    expect({ written: writer.written, dropped: writer.dropped }).toEqual({ written: 2, dropped: 1 });
  });
});
