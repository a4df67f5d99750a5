/**
 * The Express and Fastify recipes of src/merchant/adapters.ts on the real frameworks (express 5 and
 * fastify 5, dev dependencies), mounted as the recipes and the frameworks' docs show, behind the
 * global body parsers a real app has. Every callback body holds '+', '/' and '=' (trickyPayload):
 * an acknowledgement proves the bytes reached the handler intact, because the strict Base64 decoder
 * refuses a '+' turned into ' ' and the RSA padding check refuses any other change.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type Request } from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { expressCallback, fastifyCallback } from '../src/merchant/adapters.js';
import type { CallbackEvent, CallbackHandlerOptions } from '../src/merchant/callback-handler.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { deliver, EXACT_AMOUNT, makeKeyPair, trickyPayload, withdrawal } from './support/merchant.js';

const keys = makeKeyPair();
const API_KEY = 'mk-adapter';
const OK = { errCode: 0, message: '' };
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function options(events: CallbackEvent[]): CallbackHandlerOptions {
  return {
    apiKeys: [API_KEY],
    publicKey: keys.publicKey,
    store: new MemoryIdempotencyStore(),
    process: (event) => void events.push(event),
  };
}

/** A fresh callback whose ciphertext holds '+', '/' and '=', and what the merchant must have processed. */
function tricky(): { body: string; trackingId: string } {
  const { payload, body } = trickyPayload((trackingId) => withdrawal({ trackingId }), keys.privateKey);
  expect([body.includes('+'), body.includes('/'), body.endsWith('=')]).toEqual([true, true, true]);
  return { body, trackingId: String(payload.trackingId) };
}

/** The one processed event, compared field by field with what was sent (amount digit for digit). */
function processed(events: CallbackEvent[]): Array<{ type: number; trackingId: unknown; amount: string }> {
  return events.map((event) => ({
    type: event.type,
    trackingId: event.payload.trackingId,
    amount: String(event.payload.amount),
  }));
}

async function listenExpress(app: Express): Promise<string> {
  const server: Server = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listenFastify(app: FastifyInstance): Promise<string> {
  closers.push(() => app.close());
  return app.listen({ port: 0, host: '127.0.0.1' });
}

type RawRequest = Request & { rawBody?: Buffer };

describe('Express 5 recipes', () => {
  it('recipe A: express.raw on the callback route, mounted before the global express.urlencoded and express.json, processes the exact bytes', async () => {
    const events: CallbackEvent[] = [];
    const app = express();
    app.post('/callback', express.raw({ type: '*/*', limit: '64kb' }), expressCallback(options(events)));
    app.use(express.urlencoded({ extended: false }), express.json());
    app.post('/form', (req, res) => void res.json(req.body));
    const url = await listenExpress(app);
    const { body, trackingId } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: API_KEY })).toMatchObject({ status: 200, json: OK });
    expect(processed(events)).toEqual([{ type: 3, trackingId, amount: EXACT_AMOUNT }]);
    // The global parser still serves the rest of the app, and shows what it would have made of the body.
    const parsed = (await deliver(`${url}/form`, body)).json as Record<string, string>;
    expect(Object.keys(parsed)).toEqual([body.slice(0, body.indexOf('=')).replaceAll('+', ' ')]);
  });

  it('recipe B: global express.urlencoded and express.json whose verify keeps req.rawBody: the handler reads the raw bytes, not the parsed form', async () => {
    const events: CallbackEvent[] = [];
    const seen: Array<{ raw: string | undefined; parsedKeys: string[] }> = [];
    const keepRaw = (req: RawRequest, _res: unknown, buf: Buffer) => {
      req.rawBody = buf;
    };
    const app = express();
    app.use(express.urlencoded({ extended: false, verify: keepRaw }), express.json({ verify: keepRaw }));
    const route = expressCallback(options(events));
    app.post('/callback', (req: RawRequest, res) => {
      seen.push({ raw: req.rawBody?.toString('latin1'), parsedKeys: Object.keys(req.body as object) });
      route(req, res);
    });
    const url = await listenExpress(app);
    const { body, trackingId } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: API_KEY })).toMatchObject({ status: 200, json: OK });
    expect(processed(events)).toEqual([{ type: 3, trackingId, amount: EXACT_AMOUNT }]);
    // The global form parser did run: '+' became ' ' and the text split at '='. The raw bytes survived.
    expect(seen).toEqual([{ raw: body, parsedKeys: [body.slice(0, body.indexOf('=')).replaceAll('+', ' ')] }]);
  });

  it('processes the callback behind a global express.json only: a form body is left unread for the handler', async () => {
    const events: CallbackEvent[] = [];
    const app = express();
    app.use(express.json());
    app.post('/callback', expressCallback(options(events)));
    const url = await listenExpress(app);
    const { body, trackingId } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: API_KEY })).toMatchObject({ status: 200, json: OK });
    expect(processed(events)).toEqual([{ type: 3, trackingId, amount: EXACT_AMOUNT }]);
  });

  it('never acknowledges when a global express.urlencoded consumed the body without keeping the raw bytes (CB-RAW-BODY)', async () => {
    const events: CallbackEvent[] = [];
    const app = express();
    app.use(express.urlencoded({ extended: false }), express.json());
    app.post('/callback', expressCallback(options(events)));
    const url = await listenExpress(app);

    const answer = await deliver(`${url}/callback`, tricky().body, { apiKey: API_KEY });
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({
      errCode: 500,
      message:
        'raw body unavailable: a body parser consumed the request; mount express.raw({ type: "*/*" }) on the callback route before any global parser, or keep the bytes as req.rawBody',
    });
    expect(events).toEqual([]);
  });

  it('checks the key before the body, behind the global parsers (CB-KEY-FIRST)', async () => {
    const events: CallbackEvent[] = [];
    const app = express();
    app.post('/callback', express.raw({ type: '*/*' }), expressCallback(options(events)));
    app.use(express.urlencoded({ extended: false }), express.json());
    const url = await listenExpress(app);

    expect(await deliver(`${url}/callback`, 'garbage', { apiKey: 'wrong' })).toMatchObject({
      status: 401,
      json: { errCode: 401, message: 'unauthorized' },
    });
    expect(events).toEqual([]);
  });
});

describe('Fastify 5 recipe', () => {
  const asBuffer = { parseAs: 'buffer' as const, bodyLimit: 65536 };

  it('processes the exact bytes with the parseAs buffer parser, while the default JSON parser serves the rest of the app', async () => {
    const events: CallbackEvent[] = [];
    const app = Fastify();
    app.addContentTypeParser('application/x-www-form-urlencoded', asBuffer, (_req, body, done) => done(null, body));
    app.post('/callback', fastifyCallback(options(events)));
    app.post('/json', async (request) => ({ echoed: request.body }));
    const url = await listenFastify(app);
    const { body, trackingId } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: API_KEY })).toMatchObject({ status: 200, json: OK });
    expect(processed(events)).toEqual([{ type: 3, trackingId, amount: EXACT_AMOUNT }]);
    expect(await deliver(`${url}/json`, '{"a":1}', { contentType: 'application/json' })).toMatchObject({
      status: 200,
      json: { echoed: { a: 1 } },
    });
  });

  it('works inside an encapsulated plugin while the rest of the app keeps a form parser (the inherited parser removed first)', async () => {
    const events: CallbackEvent[] = [];
    const app = Fastify();
    // What @fastify/formbody does: decode the form ('+' becomes ' ').
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.post('/form', async (request) => request.body);
    await app.register(async (callbacks) => {
      // Fastify refuses a second parser for an inherited content type (FST_ERR_CTP_ALREADY_PRESENT).
      callbacks.removeContentTypeParser('application/x-www-form-urlencoded');
      callbacks.addContentTypeParser('application/x-www-form-urlencoded', asBuffer, (_req, body, done) =>
        done(null, body),
      );
      callbacks.post('/callback', fastifyCallback(options(events)));
    });
    const url = await listenFastify(app);
    const { body, trackingId } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: API_KEY })).toMatchObject({ status: 200, json: OK });
    expect(processed(events)).toEqual([{ type: 3, trackingId, amount: EXACT_AMOUNT }]);
    expect(Object.keys((await deliver(`${url}/form`, body)).json as object)).toEqual([
      body.slice(0, body.indexOf('=')).replaceAll('+', ' '),
    ]);
  });

  it('never acknowledges a body that a form parser decoded (CB-RAW-BODY), and checks the key first (CB-KEY-FIRST)', async () => {
    const events: CallbackEvent[] = [];
    const app = Fastify();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.post('/callback', fastifyCallback(options(events)));
    const url = await listenFastify(app);
    const { body } = tricky();

    expect(await deliver(`${url}/callback`, body, { apiKey: 'wrong' })).toMatchObject({
      status: 401,
      json: { errCode: 401, message: 'unauthorized' },
    });
    const refused = await deliver(`${url}/callback`, body, { apiKey: API_KEY });
    expect(refused.status).toBe(500);
    expect(refused.json).toEqual({
      errCode: 500,
      message: 'raw body unavailable: register a parseAs "buffer" content-type parser for the callback route',
    });
    expect(events).toEqual([]);
  });
});
