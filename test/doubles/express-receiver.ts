/**
 * A merchant callback receiver on Express 5, as Express's documentation shows a raw body:
 * `express.raw({ type: '*' + '/*' })` on the callback route, here after a key-check middleware so that
 * X-API-KEY is judged before a byte of the body is read (CB-KEY-FIRST). Written from the interface
 * and the manual alone. Its own choices: HTTP 400 with a non-zero errCode for what it cannot open,
 * unknown callback types refused, answer `{"errCode":0,"message":"success"}`.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { KeyObject } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { publicKeyOf } from './crypto.js';
import {
  businessWork,
  idempotencyKey,
  keyIsValid,
  openBody,
  ProcessedStore,
  type ApiKeyWindow,
} from './receiver-core.js';

/** Options of {@link startExpressReceiver}. */
export interface ReceiverOptions {
  port?: number;
  publicKey: string | KeyObject;
  apiKeys: ApiKeyWindow[];
}

/** A running receiver. */
export interface RunningReceiver {
  callbackUrl: string;
  probeUrl: string;
  close(): Promise<void>;
}

/** Starts the Express receiver on 127.0.0.1: POST /wallet/callback and GET /probe. */
export async function startExpressReceiver(options: ReceiverOptions): Promise<RunningReceiver> {
  const publicKey = publicKeyOf(options.publicKey);
  const store = new ProcessedStore('wait');
  const work = businessWork(5);
  const app = express();

  const keyFirst = (req: Request, res: Response, next: NextFunction) => {
    // CB-KEY-FIRST, CB-KEY-401: the body is not read for a failed key check.
    if (!keyIsValid(req.headers['x-api-key'], options.apiKeys)) {
      res.set('connection', 'close');
      res.status(401).json({ errCode: 401, message: 'unauthorized' });
      return;
    }
    next();
  };

  app.post(
    '/wallet/callback',
    keyFirst,
    express.raw({ type: '*/*', limit: '128kb' }),
    async (req: Request, res: Response) => {
      const raw: unknown = req.body;
      if (!Buffer.isBuffer(raw) || raw.length === 0) {
        res.status(400).json({ errCode: 4000, message: 'empty body' });
        return;
      }
      const opened = openBody(raw, publicKey);
      if ('error' in opened) {
        res.status(400).json({ errCode: 4001, message: `cannot open callback: ${opened.error}` });
        return;
      }
      const key = idempotencyKey(opened.payload, 'refuse');
      if ('error' in key) {
        res.status(400).json({ errCode: 4002, message: key.error });
        return;
      }
      try {
        await store.once(key.key, opened.text, work);
        res.status(200).json({ errCode: 0, message: 'success' });
      } catch {
        res.status(200).json({ errCode: 5000, message: 'processing failed, retry later' });
      }
    },
  );

  app.get('/probe', (_req: Request, res: Response) => {
    res.type('application/json').send(store.probeBody());
  });

  // Express's own error answers are HTML; a callback sender reads JSON.
  app.use((error: Error & { status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    const status = typeof error.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
    res.status(status).json({ errCode: status, message: error.message });
  });

  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(options.port ?? 0, '127.0.0.1', () => resolve(listening));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    // The path is the merchant's choice; this one carries a query string the service must keep.
    callbackUrl: `${origin}/wallet/callback?channel=wallet-service`,
    probeUrl: `${origin}/probe`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
