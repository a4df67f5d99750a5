import { randomUUID } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import { stringifyExact } from '../core/exact-json.js';
import { PADDINGS, otherHalf, type CryptoProfile } from '../core/profile.js';
import { halfFor, openJson, sealBytes } from '../crypto/codec.js';
import type { RsaKey } from '../crypto/keys.js';
import type { NetworkConfig } from '../net/network-config.js';
import { RunCutError, type RunSession } from '../net/run-session.js';
import { readAcknowledgement, type Acknowledgement } from '../wire/acknowledgement.js';
import { answerFailureRule, reasonInMessage } from '../wire/crypto-failure.js';
import type { Capabilities } from './capabilities.js';
import { makeStrangerKeys } from './stranger-keys.js';
import { type Exchange } from './observation.js';
import { currentNetwork } from './http-client.js';
import { defaultPayload, postCallback } from './merchant-steps.js';
import { checkUserId } from './preflight-user.js';
import { readProbeAfter } from './probe-reader.js';
import { proveRestart } from './restart-proof.js';
import { runRequest } from './service-steps.js';
import type { TemplateScope } from './template.js';
import { transportOf } from './transport.js';
import type { MerchantTarget, Preflight, PreflightStep, ServiceTarget } from './types.js';

/**
 * Pre-flight ends a run (exit 2, one line) only for a configuration it has shown to be wrong, and
 * the line says how it knows. Everything else it observes is a step of the report's `preflight`
 * (what it sent, what it saw, what it concludes); an unproven suspicion is a warning and the suites
 * run and judge the target.
 */
class Reasoning {
  readonly steps: PreflightStep[] = [];

  constructor(readonly session: RunSession) {}

  ok(what: string, observed: string, conclusion: string): void {
    this.steps.push({ what, observed, conclusion, level: 'ok' });
  }

  warn(what: string, observed: string, conclusion: string): void {
    this.steps.push({ what, observed, conclusion, level: 'warning' });
  }

  /**
   * One line, exit 2: proven wrong, and the line says how it is known (`observed`: '' when the
   * conclusion already says it). Unless the run was cut short: a target that stopped answering (it
   * answered earlier) stopped on what pre-flight sent, which proves nothing of the configuration,
   * and `--timeout` is the tool's stop. The run's stop is thrown instead, for {@link finishCut}.
   */
  stop(what: string, observed: string, conclusion: string): never {
    const stopped = this.session.stopped;
    if (stopped) throw stopped;
    throw new ConfigError('preflight', `pre-flight: ${conclusion}${observed ? ` (${what}: ${observed})` : ''}`);
  }

  result(): Preflight {
    return { verdict: this.steps.some((step) => step.level === 'warning') ? 'warning' : 'ok', steps: this.steps };
  }
}

/** The API key as messages name it: `--api-key`, or where else it came from (`the API key from env WALLET_API_KEY`). */
function keyName(target: ServiceTarget | MerchantTarget): string {
  return target.apiKeySource && target.apiKeySource !== '--api-key'
    ? `the API key from ${target.apiKeySource}`
    : '--api-key';
}

/**
 * After a request of pre-flight got no answer: is the target still there? One GET of `url` on the
 * run's network. An answer (any status) means it lives and only that request failed. A refused
 * connection from a target that answered earlier cuts the run (target-gone), which
 * {@link Reasoning.stop} then hands on as the target's failure. Anything else proves nothing.
 */
async function stillAnswers(target: ServiceTarget | MerchantTarget, url: string): Promise<boolean> {
  try {
    await transportOf(target).send({ method: 'GET', url, headers: {} });
    return true;
  } catch {
    return false;
  }
}

/** Pre-flight's request got no answer while the target lives: a warning, and the suites judge (they send it too). */
function noAnswerOnly(why: Reasoning, what: string, exchange: Exchange, conclusion: string): Preflight {
  why.warn(what, `no answer (${exchange.error ?? 'none'})`, conclusion);
  return why.result();
}

/** The lines a console prints for a pre-flight: one per warning step. */
export function preflightWarnings(preflight: Preflight): string[] {
  return preflight.steps
    .filter((step) => step.level === 'warning')
    .map((step) => `pre-flight: warning: ${step.conclusion}`);
}

function clip(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** An answer as one clause: `HTTP 400 {"errCode":4001}`, or the transport error. */
function answerOf(exchange: Exchange | undefined): string {
  if (!exchange) return 'nothing was sent';
  if (!exchange.response) return `no answer (${exchange.error ?? 'unknown error'})`;
  return `HTTP ${exchange.response.status} ${clip(exchange.response.body) || '(empty body)'}`;
}

/** Where a service that misplaces the version serves the energy query: another version, or none. */
const ENERGY_SIBLINGS = ['/api/v2/api/order/getEnergyMaxCount', '/api/api/order/getEnergyMaxCount'] as const;

const PADDING_NAME: Record<CryptoProfile['padding'], string> = {
  pkcs1: 'PKCS#1 v1.5 (pkcs1)',
  'oaep-sha1': 'OAEP-SHA1 (oaep-sha1)',
  'oaep-sha256': 'OAEP-SHA256 (oaep-sha256)',
};

/**
 * Before the service suites: the control routes, then one valid energy query. Ends the run only on
 * what is proven: a 404 on the documented path that an unknown path shares while no sibling path (/api/v2/..., /api/...)
 * answers the query, an answer that opens
 * only under another padding. A 401/403 to a valid query with our key (a wrong key cannot be told
 * from a broken key check), every control route 401, a refused query (code ≠ 0) or an answer that
 * opens under no padding are warnings: the suites judge.
 */
export async function preflightService(target: ServiceTarget, capabilities: Capabilities): Promise<Preflight> {
  const why = new Reasoning(currentNetwork().session);
  return judgeService(target, capabilities, why).catch((error: unknown) => finishCut(error, why));
}

/**
 * Pre-flight ended by a cut run: the steps so far and one warning saying so. The run goes on to the
 * engine, which reports a target that stopped answering as its failure (`target-stopped`, exit 1),
 * and the CLI ends a run `--timeout` cut with its own line (exit 2). Any other error is thrown on.
 */
function finishCut(error: unknown, why: Reasoning): Preflight {
  if (!(error instanceof RunCutError)) throw error;
  why.warn(
    'pre-flight',
    error.message,
    error.reason === 'target-gone'
      ? 'the target stopped answering during pre-flight: nothing is concluded of the configuration; the run reports the target as failed'
      : 'the run was cut during pre-flight',
  );
  return why.result();
}

/** Every control route answered 401: a warning (no rule binds the control API; the cases that need it are skipped). */
function controlTokenRefused(target: ServiceTarget, capabilities: Capabilities, why: Reasoning): void {
  const probed = Object.entries(capabilities.routes);
  if (probed.length === 0 || !probed.every(([, route]) => route?.detail === 'answered 401 to --control-token')) return;
  const token =
    target.controlTokenSource && target.controlTokenSource !== '--control-token'
      ? `the control token from ${target.controlTokenSource}`
      : '--control-token';
  why.warn(
    `the control API routes with ${token}`,
    'every control API route answered 401',
    `the service refused ${token} on every control API route: check the token; the cases that need the control API are skipped`,
  );
}

/** What pre-flight sends a service with: the energy query's scope and a stranger's keys. */
interface ServiceProbe {
  target: ServiceTarget;
  why: Reasoning;
  /** The valid energy query as the report names it. */
  what: string;
  scope: TemplateScope;
  stranger: ReturnType<typeof makeStrangerKeys>;
}

/** A fresh valid energy query's plain body. */
const energyQuery = () => ({ symbol: 'ENERGY', chainName: 'TRON' });

async function judgeService(target: ServiceTarget, capabilities: Capabilities, why: Reasoning): Promise<Preflight> {
  controlTokenRefused(target, capabilities, why);
  // --user-id against the control API, when it can tell (an unknown id proven so ends the run).
  const user = await checkUserId(target);
  if (user) why.steps.push(user);
  const key = keyName(target);
  const probe: ServiceProbe = {
    target,
    why,
    what: `one valid energy query with ${key}, encrypted with --public-key under --profile`,
    scope: { caseId: 'wc-preflight', saved: {} },
    stranger: makeStrangerKeys(target.publicKey.bits),
  };
  const { what } = probe;
  const exchange = await runRequest({ endpoint: 'energy', plain: energyQuery() }, target, probe.scope, probe.stranger);
  const response = exchange.response;
  if (!response) {
    if (await stillAnswers(target, target.baseUrl))
      return noAnswerOnly(
        why,
        what,
        exchange,
        'the service answers a plain GET of --base-url but gave no answer to a valid energy query: the suites judge it',
      );
    why.stop(
      what,
      '',
      `--base-url ${target.baseUrl} did not answer a valid energy query: ${exchange.error ?? 'no answer'}`,
    );
  }
  if (response.status === 401 || response.status === 403) {
    // Not proof of a wrong key: a service whose key check is broken (an inverted validity window)
    // answers every key so. The suites run and judge (they will fail).
    why.warn(
      what,
      answerOf(exchange),
      response.status === 401
        ? `the service answered HTTP 401 to ${key}: check the key and its validity window; if they are right, the service's key check is at fault (ERR-401); the suites judge`
        : `the service answered HTTP 403 to ${key}: check that the key holds the energy query permission; if it does, the service's permission check is at fault (ERR-403); the suites judge`,
    );
    return why.result();
  }
  if (response.status === 404) return judgeNotFound(probe, exchange);
  const envelope = response.json as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  const code = envelope && typeof envelope === 'object' && !Array.isArray(envelope) ? String(envelope.code) : undefined;
  if (response.status === 200 && code !== undefined && code !== '0') {
    // Not proof of a wrong key: a service may refuse for its own reasons, and we cannot open what it did.
    why.warn(
      what,
      `HTTP 200, code ${code}: ${clip(String(envelope?.message ?? ''), 80)}`,
      `the service refused a valid energy query (code ${code}); this is a finding for the suites, not proof of a wrong key: if every query is refused, check that --public-key is the key pair the service holds for this merchant and --profile (padding ${target.profile.padding}, requests encrypted with the ${target.profile.request} key)`,
    );
    return why.result();
  }
  if (response.decryptError && typeof envelope?.data === 'string')
    return judgeUnopened(probe, response.decryptError, envelope.data);
  const observed = `${answerOf(exchange)}${response.decrypted ? ' (data opens)' : ''}`;
  if (response.status !== 200) {
    why.warn(
      what,
      observed,
      `the service answered a valid energy query with HTTP ${response.status}: a finding for the suites, not proof of a wrong configuration`,
    );
  } else if (!response.decrypted) {
    why.warn(
      what,
      observed,
      'the answer carries no encrypted data to open: a finding for the suites, not proof of a wrong configuration',
    );
  } else {
    why.ok(what, observed, 'the service accepts the key, and its answer opens with --public-key under --profile');
  }
  return why.result();
}

/**
 * The energy query answered 404. The same operation answering at a sibling of the documented path
 * (another version, none) is a service that serves it at the wrong path (VERSION-V1): a finding,
 * not a wrong base URL. A 404 alone may be a service that lacks the endpoint (a finding). The base
 * URL is proven wrong only when the documented path is answered exactly as a path that exists nowhere.
 */
async function judgeNotFound(probe: ServiceProbe, exchange: Exchange): Promise<Preflight> {
  const { target, why, what, scope, stranger } = probe;
  for (const sibling of ENERGY_SIBLINGS) {
    const other = await runRequest({ endpoint: sibling, plain: energyQuery() }, target, scope, stranger);
    if (other.response && other.response.status !== 404) {
      why.warn(
        what,
        `POST ${exchange.request.url} answered 404; POST ${other.request.url} answered ${answerOf(other)}`,
        `the documented energy path answered 404 but the same query answers at ${sibling}: the service offers it without the documented version in its path (VERSION-V1, ENERGY-PATH); the suites will report it`,
      );
      return why.result();
    }
  }
  const unknown = await runRequest(
    { endpoint: `/api/v1/api/order/wc-preflight-no-such-endpoint-${randomUUID().slice(0, 8)}`, plain: energyQuery() },
    target,
    scope,
    stranger,
  );
  const observed = `POST ${exchange.request.url} answered 404; POST ${unknown.request.url} (a path no service has) answered ${answerOf(unknown)}`;
  if (unknown.response?.status === 404) {
    why.stop(
      what,
      observed,
      `--base-url looks wrong: the documented energy path answers 404 just as a path that exists nowhere does (the base URL is what comes before /api/v1/...)`,
    );
  }
  why.warn(
    what,
    observed,
    'the documented energy path answered 404 but an unknown path did not: the base URL reaches a service that does not offer the energy query as documented; the suites will report it',
  );
  return why.result();
}

/** The answer's data does not open under --profile: it opening under another padding proves the profile wrong. */
function judgeUnopened(probe: ServiceProbe, decryptError: string, data: string): Preflight {
  const { target, why, what } = probe;
  // Only the halves we hold can be tried: a service target holds the merchant's public key.
  const opens = PADDINGS.filter((padding) => padding !== target.profile.padding).filter((padding) => {
    const profile = { ...target.profile, padding };
    if (halfFor('response', 'decrypt', profile) !== target.publicKey.half) return false;
    try {
      openJson(data, 'response', target.publicKey, { profile });
      return true;
    } catch {
      return false;
    }
  });
  if (opens.length > 0) {
    const names = opens.map((padding) => PADDING_NAME[padding]).join(' and ');
    why.stop(
      what,
      `the envelope data does not open under ${target.profile.padding}; it opens into JSON under ${names}`,
      `the answer opens with ${names}, not ${target.profile.padding}: set padding in --profile`,
    );
  }
  const reason = reasonInMessage(decryptError);
  const rule = answerFailureRule(reason);
  why.warn(
    what,
    `HTTP 200, code 0, data that does not open: ${clip(decryptError, 160)}`,
    `the answer to a valid energy query does not open with --public-key under any padding (${rule}${reason ? `, ${reason}` : ''}); no other reading of the profile explains it, so the suites judge it`,
  );
  return why.result();
}

/**
 * A type-4 callback (the shortest payload) whose Base64 holds no '+': a form decoder leaves it
 * intact ('/' and '=' survive form decoding; a 1024-bit key's ciphertext always ends in '=').
 * PKCS#1 v1.5 with the private key is deterministic, so the fresh ids sit at both ends of the text
 * and every block changes from one attempt to the next.
 */
function plainCallback(target: MerchantTarget): { body: string; text: string } | undefined {
  const { trackingId: _tracking, requestUUID: _uuid, type, ...rest } = defaultPayload(4);
  for (let attempt = 0; attempt < 4000; attempt++) {
    const text = stringifyExact({
      type: type ?? 4,
      requestUUID: randomUUID(),
      ...rest,
      trackingId: `wc-${randomUUID()}`,
    });
    const body = sealBytes(Buffer.from(text, 'utf8'), 'callback', target.privateKey, { profile: target.profile });
    if (!body.includes('+')) return { body, text };
  }
  return undefined;
}

/** A fresh type-1 callback sealed with `key` under `profile`: its Base64 holds a '+'. */
function ordinaryCallback(key: RsaKey, profile: CryptoProfile): { body: string; text: string } {
  const payload = defaultPayload(1);
  for (let attempt = 0; ; attempt++) {
    payload.requestUUID = randomUUID();
    const text = stringifyExact(payload);
    const body = sealBytes(Buffer.from(text, 'utf8'), 'callback', key, { profile });
    if (body.includes('+') || attempt >= 50) return { body, text };
  }
}

/**
 * A valid callback answered 401. A wrong key cannot be told from a broken key check (an inverted
 * validity window refuses every key), so this is a warning. One experiment proves a receiver fault:
 * the same key under the header name spelled `X-API-KEY` (as the interface writes it) and
 * `x-api-key`. Header names are case-insensitive (RFC 9110): when exactly one spelling is
 * accepted, the key is right and the receiver reads header names by their case.
 */
async function keyHeaderExperiment(
  target: MerchantTarget,
  why: Reasoning,
  what: string,
  ordinary: Exchange,
): Promise<void> {
  const spellings = ['X-API-KEY', 'x-api-key'] as const;
  const answers: { name: string; exchange: Exchange; accepted: boolean }[] = [];
  for (const name of spellings) {
    const sealed = ordinaryCallback(target.privateKey, target.profile);
    const exchange = await postCallback(target, sealed.body, sealed.text, target.apiKey, undefined, name);
    answers.push({ name, exchange, accepted: exchange.response !== undefined && exchange.response.status !== 401 });
  }
  const observed = answers.map(({ name, exchange }) => `header ${name}: ${answerOf(exchange)}`).join('; ');
  const accepted = answers.filter((answer) => answer.accepted);
  if (accepted.length === 1) {
    why.warn(
      'the same key under the header name X-API-KEY and x-api-key',
      observed,
      `the merchant accepts ${keyName(target)} only under the header name ${accepted[0]!.name}: the key is right, and the receiver reads header names by their case, though HTTP header names are case-insensitive (RFC 9110; CB-KEY-401, CB-HEADERS); the suites judge`,
    );
    return;
  }
  why.warn(
    what,
    `${answerOf(ordinary)}; ${observed}`,
    `the merchant answered HTTP 401 to ${keyName(target)}: check the key and its validity window; if they are right, the receiver's key check is at fault (CB-KEY-401); the suites judge`,
  );
}

function sameAnswer(one: Exchange, other: Exchange): boolean {
  return (
    one.response !== undefined &&
    other.response !== undefined &&
    one.response.status === other.response.status &&
    one.response.body === other.response.body
  );
}

/**
 * Before the merchant suites: the probe (when given) has the documented shape, and one valid
 * callback is acknowledged. When it is not, experiments (never the merchant's own words) tell a
 * finding from a configuration: a callback whose Base64 a form decoder leaves intact, callbacks
 * sealed under the other readings of the profile, one sealed with a stranger's key. `network`:
 * the one the run will use (default: the process's).
 */
export async function preflightMerchant(
  target: MerchantTarget,
  network: NetworkConfig = currentNetwork(),
): Promise<Preflight> {
  const why = new Reasoning(network.session);
  return judgeMerchant(target, network, why).catch((error: unknown) => finishCut(error, why));
}

/** The probe's shape and, with --restart, that the restart command works: each proven wrong ends the run. */
async function checkMerchantSetup(target: MerchantTarget, network: NetworkConfig, why: Reasoning): Promise<void> {
  if (target.probeUrl || target.probeCmd) {
    try {
      // The shape is what matters here: one page tells it (a long history is not read through).
      await readProbeAfter(target, undefined, { keep: false, maxPages: 1, network });
    } catch (error) {
      why.stop('reading the processing probe', '', (error as Error).message);
    }
  }
  if (target.restartCmd && !target.restartHook) {
    const restart = await proveRestart(target, network.session);
    if (!restart.proven) why.stop(restart.step.what, restart.step.observed, restart.step.conclusion);
    why.steps.push(restart.step);
  }
}

/** Sends a sealed callback with the target's key. */
function deliver(target: MerchantTarget, sealed: { body: string; text: string }): Promise<Exchange> {
  return postCallback(target, sealed.body, sealed.text, target.apiKey);
}

const ack = (exchange: Exchange): Acknowledgement => readAcknowledgement(exchange.response);

async function judgeMerchant(target: MerchantTarget, network: NetworkConfig, why: Reasoning): Promise<Preflight> {
  await checkMerchantSetup(target, network, why);
  const sealed = ordinaryCallback(target.privateKey, target.profile);
  const plus = sealed.body.includes('+');
  const ordinary = await deliver(target, sealed);
  const what = `one valid deposit callback (its Base64 holds ${plus ? "a '+'" : "no '+'"}) with ${keyName(target)}, sealed with --private-key under --profile`;
  if (!ordinary.response) {
    if (await stillAnswers(target, target.callbackUrl))
      return noAnswerOnly(
        why,
        what,
        ordinary,
        'the merchant answers a plain GET of --callback-url but gave no answer to a valid callback: the suites judge it',
      );
    why.stop(
      what,
      '',
      `--callback-url ${target.callbackUrl} did not answer a valid callback: ${ordinary.error ?? 'no answer'}`,
    );
  }
  if (ordinary.response.status === 401) {
    await keyHeaderExperiment(target, why, what, ordinary);
    return why.result();
  }
  const ordinaryAck = ack(ordinary);
  if (ordinaryAck.verdict !== 'not-acknowledged') {
    why.ok(
      what,
      `${answerOf(ordinary)} (${ordinaryAck.reason})`,
      'the merchant accepts the key and opens the callback',
    );
    return why.result();
  }
  why.warn(
    what,
    `${answerOf(ordinary)} (${ordinaryAck.reason})`,
    `the merchant did not acknowledge a valid callback (${ordinaryAck.reason}); pre-flight tries to tell a finding from a configuration`,
  );
  if (await formDecodingExplains(target, why, plus)) return why.result();
  const stranger = await strangerExperiment(target, why);
  if (ack(stranger).verdict === 'not-acknowledged') await otherProfilesExperiment(target, why);
  compareAnswers(why, ordinary, stranger);
  return why.result();
}

/**
 * Experiment 1: a callback whose Base64 a form decoder leaves intact (no '+'). Acknowledged: the key
 * and the profile are right (it opened what we sealed), so the ordinary one failed on how it was
 * read. True when that explains the refusal.
 */
async function formDecodingExplains(target: MerchantTarget, why: Reasoning, plus: boolean): Promise<boolean> {
  const plain = plus ? plainCallback(target) : undefined;
  if (!plain) {
    why.ok(
      "a valid callback whose Base64 holds no '+'",
      plus
        ? 'none could be built with this key size and profile in 4000 attempts'
        : 'the first callback already held none',
      'this experiment was not run',
    );
    return false;
  }
  const exchange = await deliver(target, plain);
  const verdict = ack(exchange);
  if (verdict.verdict !== 'not-acknowledged') {
    why.warn(
      "a valid callback whose Base64 holds no '+' (the only character a form decoder changes), same key and profile",
      `${answerOf(exchange)} (${verdict.reason})`,
      "the merchant opens a callback sealed with --private-key under --profile, so the key and the profile are right; it fails a callback whose Base64 holds a '+': it reads the body as a form (CB-RAW-BODY), a finding the suites report",
    );
    return true;
  }
  why.ok(
    "a valid callback whose Base64 holds no '+', same key and profile",
    `${answerOf(exchange)} (${verdict.reason})`,
    'not acknowledged either: how the body is read does not explain it',
  );
  return false;
}

/** Experiment 2: a stranger's key: what the merchant answers to a callback it cannot open. */
async function strangerExperiment(target: MerchantTarget, why: Reasoning): Promise<Exchange> {
  const strangerKeys = makeStrangerKeys(target.privateKey.bits);
  const strangerKey =
    halfFor('callback', 'encrypt', target.profile) === 'private' ? strangerKeys.privateKey : strangerKeys.publicKey;
  const stranger = await deliver(target, ordinaryCallback(strangerKey, target.profile));
  const strangerAck = ack(stranger);
  why.ok(
    'the same callback sealed with a key pair the merchant cannot hold',
    `${answerOf(stranger)} (${strangerAck.reason})`,
    strangerAck.verdict !== 'not-acknowledged'
      ? 'acknowledged: the merchant acknowledges what it cannot open (the suites judge CB-NO-FALSE-ACK)'
      : 'not acknowledged',
  );
  return stranger;
}

/**
 * Experiment 3: the other readings of the profile with the key pair we hold: one that is
 * acknowledged (and a stranger's is not) proves the merchant's profile differs from --profile.
 */
async function otherProfilesExperiment(target: MerchantTarget, why: Reasoning): Promise<void> {
  for (const padding of PADDINGS) {
    for (const half of [target.profile.callback, otherHalf(target.profile.callback)]) {
      if (padding === target.profile.padding && half === target.profile.callback) continue;
      const profile: CryptoProfile = { ...target.profile, padding, callback: half };
      const key = half === 'private' ? target.privateKey : target.privateKey.publicKey;
      let sealed: { body: string; text: string };
      try {
        sealed = ordinaryCallback(key, profile);
      } catch {
        continue;
      }
      const exchange = await deliver(target, sealed);
      const verdict = ack(exchange);
      const reading = `padding ${padding}, callbacks encrypted with the ${half} key`;
      if (verdict.verdict !== 'not-acknowledged') {
        const paddingDiffers = padding !== target.profile.padding;
        const halfDiffers = half !== target.profile.callback;
        why.stop(
          `a valid callback sealed with the key pair of --private-key under ${reading}`,
          `${answerOf(exchange)} (${verdict.reason}), while --profile's reading and a stranger's key are not acknowledged`,
          `the merchant opens callbacks under ${reading}, not under --profile's (padding ${target.profile.padding}, ${target.profile.callback} key): set ${paddingDiffers ? 'padding' : ''}${paddingDiffers && halfDiffers ? ' and ' : ''}${halfDiffers ? 'callback' : ''} in --profile`,
        );
      }
    }
  }
  why.ok(
    'the same callback under every other padding and key half of the pair of --private-key',
    'none acknowledged',
    'no other reading of the profile explains it',
  );
}

/** The valid callback's answer beside the stranger's: the same answer means the merchant cannot tell them apart. */
function compareAnswers(why: Reasoning, ordinary: Exchange, stranger: Exchange): void {
  if (sameAnswer(ordinary, stranger)) {
    why.warn(
      'comparing the answers',
      "the valid callback got exactly the answer of a callback sealed with a stranger's key",
      'the merchant treats a valid callback like one it cannot open: its key may not be the pair of --private-key, or it does not open callbacks as the interface sends them (CB-RAW-BODY, CB-DECRYPT); pre-flight cannot prove which, so the suites run and judge',
    );
  } else {
    why.warn(
      'comparing the answers',
      "the valid callback and the stranger's got different answers",
      'the merchant tells a valid callback from one it cannot open but still does not acknowledge it: a finding for the suites, not the configuration',
    );
  }
}
