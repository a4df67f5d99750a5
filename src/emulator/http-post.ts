import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';

/** The answer to a POST, or why there was none (status 0). */
export interface PostAnswer {
  /** HTTP status; 0 when no answer arrived (refused, reset, timed out). */
  status: number;
  /** The answer body, cut at the limit. */
  body: Buffer;
  /** Why there is no answer. */
  error?: string;
}

/** Keep-alive agents of one emulator's callback dispatcher. */
export interface PostAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/** Agents that reuse connections to callback targets (at most 128 sockets per target); `ca` is trusted besides the system roots. */
export function createPostAgents(ca?: string[]): PostAgents {
  const http = new HttpAgent({ keepAlive: true, maxSockets: 128 });
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 128, ...(ca?.length ? { ca: [...rootCertificates, ...ca] } : {}) });
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}

/**
 * POSTs a body exactly as given (no form encoding: CB-RAW-BODY) and reads at most `limit` bytes of
 * the answer. Never rejects: a refused connection, a reset or the signal firing (a hanging
 * receiver) is status 0 with the reason.
 */
export function postRaw(url: string, headers: Record<string, string>, body: string, options: { agents: PostAgents; signal: AbortSignal; limit: number }): Promise<PostAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: PostAnswer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      finish({ status: 0, body: Buffer.alloc(0), error: `not a URL: ${url}` });
      return;
    }
    const secure = target.protocol === 'https:';
    const payload = Buffer.from(body, 'utf8');
    const send = secure ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        agent: secure ? options.agents.https : options.agents.http,
        headers: { ...headers, 'content-length': String(payload.length) },
        signal: options.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          if (received >= options.limit) return;
          received += chunk.length;
          chunks.push(chunk);
        });
        res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, options.limit) }));
        res.on('error', (error) => finish({ status: 0, body: Buffer.alloc(0), error: reason(error, options.signal) }));
        res.on('aborted', () => finish({ status: 0, body: Buffer.alloc(0), error: reason(new Error('answer aborted'), options.signal) }));
      },
    );
    req.on('error', (error) => finish({ status: 0, body: Buffer.alloc(0), error: reason(error, options.signal) }));
    req.end(payload);
  });
}

function reason(error: Error, signal: AbortSignal): string {
  if (signal.aborted) {
    const cause = signal.reason as { name?: string } | undefined;
    return cause?.name === 'TimeoutError' ? 'timed out: no answer within the callback timeout' : 'cancelled: the emulator is shutting down';
  }
  return (error as NodeJS.ErrnoException).code ?? error.message;
}
