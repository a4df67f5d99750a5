import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from '../platform/http-io.js';
import { halfFor } from '../crypto/codec.js';
import { nativeCodec } from '../service/native-codec.js';
import { acceptedBase64 } from '../service/policies.js';
import {
  createPipeline,
  SERVICE_ENDPOINTS,
  type PipelineAnswer,
  type PipelineCodec,
  type PipelineEndpoint,
  type PipelineOperation,
  type PipelineShapes,
} from '../service/pipeline.js';
import type { EmulatorMerchant, Permission } from './config.js';
import { merchantKey, type EmulatorContext } from './emulator-context.js';
import { noteWhy, sendTooLarge } from './envelope.js';
import type { RequestCrypto } from './seal-pool.js';

/** The two encrypted order endpoints (ENERGY-PATH, ORDER-PATH). */
export type OrderEndpoint = 'getEnergyMaxCount' | 'withdrawWithoutVerify';

/** Exact paths under {base_url} (VERSION-V1). */
export const ORDER_PATHS: Readonly<Record<OrderEndpoint, string>> = Object.freeze({
  getEnergyMaxCount: '/api/v1/api/order/getEnergyMaxCount',
  withdrawWithoutVerify: '/api/v1/api/order/withdrawWithoutVerify',
});

/**
 * The native codec with the keys the merchant's profile names. With sealing threads, the RSA work
 * (a request opened, a result sealed: most of an order's CPU) runs there, so the event loop serves
 * the next request meanwhile; only when half their queue is taken (the other half is the
 * callbacks'), or a thread died, does it run here
 * (measured: sharing the work with the threads earlier, from two jobs queued per thread, left them
 * idle while the event loop was busy with RSA, and served fewer orders per second). Both give
 * the same text, failure kind and wording (the same functions, src/service/native-codec.ts).
 */
function merchantCodec(merchant: EmulatorMerchant, crypto: RequestCrypto | undefined): PipelineCodec {
  const profile = merchant.profile;
  const requestKey = merchantKey(merchant, halfFor('request', 'decrypt', profile));
  const responseKey = merchantKey(merchant, halfFor('response', 'encrypt', profile));
  const inline = nativeCodec(requestKey, responseKey, profile);
  if (!crypto) return inline;
  const onThreads = <T>(job: () => Promise<T>, here: () => T): T | Promise<T> =>
    crypto.roomForRequests ? job().catch(() => here()) : here();
  return {
    open: (data, accept) =>
      onThreads(
        () => crypto.open(data, requestKey, profile, accept),
        () => inline.open(data, accept),
      ),
    seal: (json) =>
      onThreads(
        () => crypto.sealResponse(json, responseKey, profile),
        () => inline.seal(json),
      ),
  };
}

type Serve = (
  endpoint: PipelineEndpoint,
  request: Parameters<ReturnType<typeof createPipeline>>[1],
) => Promise<PipelineAnswer | undefined>;

/** One pipeline per running emulator, built on its first request. */
const PIPELINES = new WeakMap<EmulatorContext, Serve>();

/**
 * The pipeline (src/service/pipeline.ts) over the emulator's parts: its key ring, the native codec,
 * the service's operations over the SQLite state, the config's policies, and the variant's seams
 * (each named for what it shapes; the order endpoints' seams leave card close alone, as they always did).
 */
function pipelineOf(ctx: EmulatorContext): Serve {
  let serve = PIPELINES.get(ctx);
  if (serve) return serve;
  const variant = ctx.variant;
  const codecs = new Map<EmulatorMerchant, PipelineCodec>();
  const orderOnly = (operation: string) => operation !== 'closeCard';
  const shapes: PipelineShapes<EmulatorMerchant> = {
    ...(variant.requestChecks
      ? { requestChecks: (order, { operation }) => (orderOnly(operation) ? variant.requestChecks!(order) : order) }
      : {}),
    ...(variant.apiKey
      ? {
          apiKey: (header, { operation }) =>
            orderOnly(operation)
              ? variant.apiKey!(header, { endpoint: operation as OrderEndpoint, merchants: ctx.config.merchants })
              : header,
        }
      : {}),
    ...(variant.acceptsContentType
      ? {
          acceptsContentType: (type, conforming, { operation, header }) =>
            variant.acceptsContentType!(type, conforming, {
              endpoint: orderOnly(operation) ? (operation as OrderEndpoint) : 'card',
              header,
            }),
        }
      : {}),
    ...(variant.requestData ? { requestData: variant.requestData } : {}),
    ...(variant.requestText ? { requestText: variant.requestText } : {}),
    ...(variant.successEnvelope ? { successEnvelope: variant.successEnvelope } : {}),
    ...(variant.httpError ? { httpError: variant.httpError } : {}),
    ...(variant.cardFailure ? { cardFailure: variant.cardFailure } : {}),
    ...(variant.cardSuccess ? { cardSuccess: variant.cardSuccess } : {}),
  };
  const operations: Record<string, PipelineOperation<EmulatorMerchant>> = {
    getEnergyMaxCount: (merchant, plain) =>
      ctx.operations.getEnergyMaxCount(ctx.service, BigInt(merchant!.userId), plain),
    withdrawWithoutVerify: (merchant, plain) =>
      ctx.operations.withdrawWithoutVerify(ctx.service, BigInt(merchant!.userId), plain),
    closeCard: (merchant, plain) =>
      ctx.operations.closeCard(ctx.service, plain, merchant === undefined ? undefined : BigInt(merchant.userId)),
  };
  serve = createPipeline<EmulatorMerchant>({
    keys: {
      check: (header, operation, now) =>
        ctx.keys.check(header as string | string[] | undefined, operation as Permission, now),
    },
    codec: (merchant) => {
      let codec = codecs.get(merchant);
      if (!codec) codecs.set(merchant, (codec = merchantCodec(merchant, ctx.requestCrypto)));
      return codec;
    },
    operations: (operation) => operations[operation],
    policies: () => ctx.service.policies,
    acceptedBase64,
    now: ctx.now,
    requestId: () => `req-${ctx.random.uuid()}`,
    shapes,
  });
  PIPELINES.set(ctx, serve);
  return serve;
}

/**
 * Serves an order endpoint (ENERGY-*, ORDER-*) or card close (CARD-*; no credential in the
 * interface, U-CARD-AUTH: an X-API-KEY sent anyway is checked) through the pipeline: the emulator's
 * part is the transport, its body limit (413, the connection closed so the rest is not read) and a broken
 * connection (dropped, never answered).
 */
export async function serveEndpoint(
  ctx: EmulatorContext,
  operation: OrderEndpoint | 'closeCard',
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const answer = await pipelineOf(ctx)(SERVICE_ENDPOINTS[operation], {
    apiKey: req.headers['x-api-key'],
    contentType: header('content-type'),
    body: async () => {
      const body = await readBody(req, ctx.config.bodyLimit);
      if (body.ok) return body.body.toString('utf8');
      if (body.reason === 'too-large') sendTooLarge(res, ctx.config.bodyLimit);
      else res.destroy();
      return undefined;
    },
  });
  if (!answer) return;
  if (answer.why !== undefined) noteWhy(res, answer.why);
  sendJson(res, answer.status, answer.body);
}
