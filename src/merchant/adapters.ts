/**
 * Framework recipes for the callback receiver. Neither Express nor Fastify is a dependency: the
 * adapters are typed structurally, and the tests drive them with node:http the way the frameworks
 * would. The one thing every recipe must guarantee is CB-RAW-BODY: the handler sees the body's
 * bytes exactly as sent. A form parser that ran first has turned every '+' into ' ' and split the
 * text at '=' and '&', so its `req.body` is useless; the raw bytes have to be kept before it runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createCallbackHandler,
  createCallbackReceiver,
  ERR_CODES,
  type CallbackHandlerOptions,
} from './callback-handler.js';

/**
 * An Express route handler for callbacks. It reads, in this order: `req.rawBody` (a Buffer kept by a
 * global parser's `verify`), `req.body` when it is a Buffer (`express.raw`), else the request stream.
 * A stream that a parser consumed without keeping the bytes gets HTTP 500 with a non-zero errCode
 * saying how to fix the app, never a false errCode 0.
 *
 * Recipe A, the route reads its own body (mount it before any global parser):
 * ```ts
 * app.post('/callback', express.raw({ type: '*\/*', limit: '64kb' }), expressCallback(options));
 * app.use(express.urlencoded({ extended: false }), express.json());
 * ```
 * Recipe B, the app already mounts a global urlencoded/JSON parser: keep the raw bytes with `verify`:
 * ```ts
 * const keepRaw = (req, _res, buf) => { req.rawBody = buf; };
 * app.use(express.urlencoded({ extended: false, verify: keepRaw }), express.json({ verify: keepRaw }));
 * app.post('/callback', expressCallback(options));
 * ```
 *
 * @example app.post('/callback', express.raw({ type: '*\/*' }), expressCallback({ apiKeys, publicKey, store, process }))
 */
export function expressCallback(options: CallbackHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return createCallbackHandler(options);
}

/** The parts of a Fastify request the adapter reads. */
interface FastifyLikeRequest {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: unknown;
}

/** The parts of a Fastify reply the adapter writes. */
interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(payload: string): unknown;
}

/**
 * A Fastify route handler for callbacks. Register a buffer parser for the callback's content type
 * so the body arrives as raw bytes (Fastify has no form parser by default, and
 * `@fastify/formbody` would decode '+' to ' '):
 * ```ts
 * app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: 65536 },
 *   (_req, body, done) => done(null, body));
 * app.post('/callback', fastifyCallback(options));
 * ```
 * Inside an encapsulated plugin the parser applies to that plugin's routes only, so the rest of the
 * app can keep a form parser; when the root app registered one, the plugin must first call
 * `app.removeContentTypeParser('application/x-www-form-urlencoded')` (Fastify refuses a second parser
 * for a type with FST_ERR_CTP_ALREADY_PRESENT). A body that is not a Buffer gets HTTP 500 with a
 * non-zero errCode.
 *
 * @example app.post('/callback', fastifyCallback({ apiKeys, publicKey, store, process }))
 */
export function fastifyCallback(
  options: CallbackHandlerOptions,
): (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<void> {
  const receiver = createCallbackReceiver(options);
  return async (request, reply) => {
    const answer =
      receiver.authorize(request.headers) ??
      (Buffer.isBuffer(request.body)
        ? await receiver.receive(request.body)
        : receiver.answer(
            'error',
            500,
            ERR_CODES.failed,
            'raw body unavailable: register a parseAs "buffer" content-type parser for the callback route',
          ));
    reply
      .code(answer.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(answer.body));
  };
}
