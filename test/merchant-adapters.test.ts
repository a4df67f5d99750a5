/**
 * The Express and Fastify recipes of src/merchant/adapters.ts, driven by node:http servers that do
 * exactly what the frameworks' parsers do to the request before the route handler runs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { expressCallback, fastifyCallback, type FastifyLikeReply } from '../src/merchant/adapters.js';
import type { CallbackEvent, CallbackHandlerOptions } from '../src/merchant/callback-handler.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { deliver, makeKeyPair, trickyPayload, withdrawal } from './support/merchant.js';

const keys = makeKeyPair();
const API_KEY = 'mk-adapter';
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

type Parsed = IncomingMessage & { rawBody?: Buffer; body?: unknown };
type Middleware = (req: Parsed, body: Buffer) => void;

function options(events: CallbackEvent[]): CallbackHandlerOptions {
  return { apiKeys: [API_KEY], publicKey: keys.publicKey, store: new MemoryIdempotencyStore(), process: (event) => void events.push(event) };
}

/** Reads the whole stream, as a body parser does. */
async function consume(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function listen(handler: (req: Parsed, res: ServerResponse) => Promise<void> | void): Promise<string> {
  const server = createServer((req, res) => void handler(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
}

/** An Express app: a global parser (or none), then the callback route. */
async function expressApp(parser: Middleware | undefined, events: CallbackEvent[]): Promise<string> {
  const route = expressCallback(options(events));
  return listen(async (req, res) => {
    if (parser) parser(req, await consume(req));
    route(req, res);
  });
}

const urlencoded: Middleware = (req, body) => {
  req.body = Object.fromEntries(new URLSearchParams(body.toString('latin1')));
};
const keepRaw: Middleware = (req, body) => {
  req.rawBody = body; // the `verify` callback of express.urlencoded
  urlencoded(req, body);
};
const raw: Middleware = (req, body) => {
  req.body = body; // express.raw({ type: '*/*' })
};

describe('Express recipes', () => {
  const { body } = trickyPayload((trackingId) => withdrawal({ trackingId }), keys.privateKey);

  it.each<[string, Middleware | undefined]>([
    ['no body parser at all', undefined],
    ['express.raw on the route', raw],
    ['a global urlencoded parser whose verify callback keeps req.rawBody', keepRaw],
  ])('processes the callback with %s', async (_name, parser) => {
    const events: CallbackEvent[] = [];
    const url = await expressApp(parser, events);
    expect((await deliver(url, body, { apiKey: API_KEY })).json).toEqual({ errCode: 0, message: '' });
    expect(events).toHaveLength(1);
  });

  it('processes the callback when an Express 4 JSON parser left req.body = {} and the stream unread', async () => {
    const events: CallbackEvent[] = [];
    const route = expressCallback(options(events));
    const url = await listen((req, res) => {
      req.body = {};
      route(req, res);
    });
    expect((await deliver(url, body, { apiKey: API_KEY })).json).toEqual({ errCode: 0, message: '' });
    expect(events).toHaveLength(1);
  });

  it('never acknowledges when a global form parser consumed the body without keeping the raw bytes (CB-RAW-BODY)', async () => {
    const events: CallbackEvent[] = [];
    let seen: unknown;
    const url = await expressApp((req, bytes) => {
      urlencoded(req, bytes);
      seen = req.body;
    }, events);
    const answer = await deliver(url, body, { apiKey: API_KEY });
    // What the form parser made of the Base64: '+' became ' ', the text split at '='.
    expect(Object.keys(seen as object)[0]).toContain(' ');
    expect(answer.status).toBe(500);
    expect(answer.json).toMatchObject({ errCode: 500, message: expect.stringContaining('express.raw') });
    expect(events).toHaveLength(0);
  });

  it('checks the key before the pre-read body (CB-KEY-FIRST)', async () => {
    const events: CallbackEvent[] = [];
    const url = await expressApp(keepRaw, events);
    expect(await deliver(url, 'garbage', { apiKey: 'wrong' })).toMatchObject({ status: 401, json: { errCode: 401, message: 'unauthorized' } });
  });
});

describe('Fastify recipe', () => {
  /** A Fastify reply over a node:http response. */
  const reply = (res: ServerResponse): FastifyLikeReply => {
    const self: FastifyLikeReply = {
      code: (status) => ((res.statusCode = status), self),
      header: (name, value) => (res.setHeader(name, value), self),
      send: (payload) => res.end(payload),
    };
    return self;
  };

  it('processes the callback with a parseAs buffer content-type parser, and refuses a parsed body', async () => {
    const events: CallbackEvent[] = [];
    const route = fastifyCallback(options(events));
    const asBuffer = await listen(async (req, res) => route({ headers: req.headers, body: await consume(req) }, reply(res)));
    const { body } = trickyPayload((trackingId) => withdrawal({ trackingId }), keys.privateKey);
    expect((await deliver(asBuffer, body, { apiKey: API_KEY })).json).toEqual({ errCode: 0, message: '' });
    expect(events).toHaveLength(1);

    const formbody = await listen(async (req, res) => route({ headers: req.headers, body: Object.fromEntries(new URLSearchParams((await consume(req)).toString())) }, reply(res)));
    const refused = await deliver(formbody, body, { apiKey: API_KEY });
    expect(refused.status).toBe(500);
    expect(refused.json).toMatchObject({ errCode: 500, message: expect.stringContaining('parseAs "buffer"') });
    expect(events).toHaveLength(1);
  });
});
