/**
 * A merchant callback receiver on Fastify 5, as Fastify's documentation shows a raw body:
 * `addContentTypeParser('*', { parseAs: 'buffer' }, ...)`, with the X-API-KEY check in the route's
 * onRequest hook, which runs before the body is parsed (CB-KEY-FIRST). Written from the interface
 * and the manual alone. Its own choices: what it cannot open is HTTP 200 with a non-zero errCode
 * (U-CB-RESPONSE: only errCode 0 counts as success), a callback type outside 1..7 is processed as an
 * "other" callback (U-CB-FIELDS: the list of event kinds is not shown), an identical delivery that
 * arrives while the first is still being processed gets a non-zero errCode (the service retries it
 * and then gets success directly: nothing is lost, nothing processed twice), answer `{"errCode":0}`.
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { KeyObject } from 'node:crypto';
import { publicKeyOf } from './crypto.js';
import {
  businessWork,
  idempotencyKey,
  keyIsValid,
  openBody,
  ProcessedStore,
  type ApiKeyWindow,
  type InFlightPolicy,
} from './receiver-core.js';

/** Options of {@link startFastifyReceiver}. */
export interface FastifyReceiverOptions {
  port?: number;
  publicKey: string | KeyObject;
  apiKeys: ApiKeyWindow[];
  /** An identical delivery during processing: told to retry (`busy`, default) or made to wait. */
  inFlight?: InFlightPolicy;
  /** How long business processing takes (default 40 ms). */
  processingMs?: number;
}

/** Starts the Fastify receiver on 127.0.0.1: POST /hooks/wallet and the probe GET /internal/processed-events. */
export async function startFastifyReceiver(
  options: FastifyReceiverOptions,
): Promise<{ callbackUrl: string; probeUrl: string; close(): Promise<void> }> {
  const publicKey = publicKeyOf(options.publicKey);
  const store = new ProcessedStore(options.inFlight ?? 'busy', true);
  const work = businessWork(options.processingMs ?? 40);
  const app = Fastify({ logger: false, bodyLimit: 128 * 1024 });

  // Every content type (the service sends application/x-www-form-urlencoded) arrives as raw bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.post('/hooks/wallet', {
    onRequest: async (req: FastifyRequest, reply: FastifyReply) => {
      // CB-KEY-FIRST, CB-KEY-401: answered before the body is parsed.
      if (!keyIsValid(req.headers['x-api-key'], options.apiKeys)) {
        // U-CB-RESPONSE: the body of a 401 is not shown; this one is plain text.
        return reply.code(401).header('connection', 'close').type('text/plain; charset=utf-8').send('unauthorized');
      }
    },
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const raw = req.body;
      if (!Buffer.isBuffer(raw) || raw.length === 0)
        return reply.code(200).send({ errCode: 10, message: 'empty body' });
      const opened = openBody(raw, publicKey);
      if ('error' in opened) return reply.code(200).send({ errCode: 11, message: opened.error });
      const key = idempotencyKey(opened.payload, 'process-as-other');
      if ('error' in key) return reply.code(200).send({ errCode: 12, message: key.error });
      try {
        const outcome = await store.once(key.key, opened.text, work);
        // U-CB-RESPONSE: an identical delivery during the first one's processing is told to retry.
        if (outcome === 'busy')
          return reply.code(200).send({ errCode: 14, message: 'the same event is being processed, retry later' });
        return reply.code(200).send({ errCode: 0 });
      } catch {
        return reply.code(200).send({ errCode: 13, message: 'processing failed' });
      }
    },
  });

  app.get('/internal/processed-events', async (_req, reply) => reply.type('application/json').send(store.probeBody()));

  const address = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  return {
    callbackUrl: `${address}/hooks/wallet`,
    probeUrl: `${address}/internal/processed-events`,
    close: () => app.close(),
  };
}
