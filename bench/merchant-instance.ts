/**
 * One reference merchant process for `npm run bench merchant`: `tsx bench/merchant-instance.ts
 * STORE PUBLIC_KEY_PEM_FILE API_KEY` where STORE is `memory`, `ack-only` (answers errCode 0 without
 * decrypting: the storm driver's ceiling), a SQLite path or a postgres:// URL. Prints `port N`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseKey, type RsaPublicKey } from '../src/crypto/keys.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer } from '../src/merchant/server.js';

const [store, keyFile, apiKey] = process.argv.slice(2) as [string, string, string];
// Under --cpu-prof (BENCH_CPU_PROF), an exit on SIGTERM writes the profile; the default action would not.
if (process.env.BENCH_CPU_PROF) process.once('SIGTERM', () => process.exit(0));
if (store === 'ack-only') {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0,"message":""}'));
  });
  server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
} else {
  const publicKey = parseKey(readFileSync(keyFile), { expect: 'public' }) as RsaPublicKey;
  const merchant = await startMerchantServer({
    apiKeys: [apiKey],
    publicKey,
    store: store === 'memory' ? new MemoryIdempotencyStore() : store,
  });
  console.log(`port ${merchant.port}`);
}
