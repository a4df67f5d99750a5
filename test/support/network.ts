import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import { resolve } from 'node:path';
import { ROOT } from './cli.js';

/** What one run of the CLI did. */
export interface EnvRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Proxy variables cleared so that the machine's own settings never leak into a test. */
const PROXY_VARIABLES = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
];

/** Runs the built CLI without blocking this process (targets live in it), with exactly these proxy/CA variables. */
export function runCliWithEnv(args: string[], env: Record<string, string> = {}): Promise<EnvRun> {
  const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of PROXY_VARIABLES) delete base[name];
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
    });
    let stdout = '';
    let stderr = '';
    const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => {
      clearTimeout(kill);
      done({ status, stdout, stderr });
    });
  });
}

/** A local forward proxy: CONNECT tunnels (https) and absolute-form requests (http); it records what it carried. */
export interface TestProxy {
  url: string;
  /** `host:port` of every CONNECT. */
  connects: string[];
  /** Absolute URLs of every plain HTTP request. */
  forwarded: string[];
  close(): Promise<void>;
}

/** Starts a small forward proxy on loopback. */
export async function startTestProxy(): Promise<TestProxy> {
  const connects: string[] = [];
  const forwarded: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    forwarded.push(req.url ?? '');
    const target = new URL(req.url ?? '');
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    const authority = req.url ?? '';
    connects.push(authority);
    const [host, port] = [
      authority.slice(0, authority.lastIndexOf(':')),
      Number(authority.slice(authority.lastIndexOf(':') + 1)),
    ];
    const upstream = net.connect(port, host.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream).add(client);
    upstream.on('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connects,
    forwarded,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
