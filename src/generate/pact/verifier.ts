import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Verifier } from '@pact-foundation/pact';
import { ConfigError } from '../../core/errors.js';
import { LosslessNumber, parseExactJson, type ExactJson } from '../../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile } from '../../core/profile.js';
import { validateSchema } from '../../core/schemas.js';
import { halfFor, openJson, sealJson } from '../../crypto/codec.js';
import { publicHalf, type RsaKey } from '../../crypto/keys.js';
import {
  controlOpenCard,
  controlSetEnergy,
  type ControlAnswer,
  type ControlCard,
  type ControlClient,
  type ControlEnergy,
} from '../../generated/control-client.js';
import {
  buildPactContract,
  PACT_PROVIDER,
  type PactContract,
  type PactHttpInteraction,
  type ProviderState,
} from './contract.js';
import type { SpecSource } from '../../spec/document.js';

/** Where the pacts come from and where results go: a Pact Broker (PactFlow included). */
interface PactBrokerOptions {
  /** Pact Broker base URL; pacts for the provider are fetched from it. */
  url: string;
  token?: string;
  /** Publish the verification results (needs `providerVersion`), for can-i-deploy. */
  publish?: boolean;
  providerVersion?: string;
  providerBranch?: string;
  /** Which consumer versions to verify; default: the main branch and every deployed or released version. */
  consumerVersionSelectors?: Array<Record<string, unknown>>;
}

/** What `pact verify` needs: the provider, the merchant's credentials and where the pacts are. */
interface PactVerifyOptions {
  /** The spec the pacts were generated from: the plain examples and provider states come from it. */
  spec: SpecSource;
  /** {base_url} of the order endpoints. */
  baseUrl: string;
  /** {card_base_url} of card close (default: baseUrl). */
  cardBaseUrl?: string;
  /** The merchant's real X-API-KEY, injected into every request that carries a valid key. */
  apiKey: string;
  /** A valid key without the permission, for the 403 interaction (ERR-403). */
  forbiddenKey?: string;
  /** The merchant's key: the public one, or the private one (which carries its public half). */
  key: RsaKey;
  profile?: CryptoProfile;
  /** The merchant's userId in the wallet system (default: the pact's example merchant). */
  userId?: number;
  /** The provider offers the documented control API (docs/service-guide.md) with this token: provider states are set up through it. */
  controlToken?: string;
  /** Local pact files to verify (ignored with a broker). */
  pactFiles?: string[];
  broker?: PactBrokerOptions;
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** Source of fresh suffixes (callBackId, closeSerialNo, unknown keys); injected by tests. */
  nonce?: () => string;
  /** Transport of the control API calls. */
  fetch?: typeof fetch;
}

/** One check made outside Pact: the decrypted envelope data of an interaction. */
interface DecryptedCheck {
  interaction: string;
  status: 'passed' | 'failed' | 'skipped';
  message: string;
}

/** The outcome of `pact verify`. */
export interface PactVerification {
  /** Pact passed and no decrypted check failed. */
  passed: boolean;
  /** Did the Pact verifier pass? */
  pactPassed: boolean;
  /** The Pact verifier's mismatches, one line each (empty when it passed). */
  failures: string[];
  checks: DecryptedCheck[];
  /** Setup notes (states that could not be arranged, interactions the contract does not know). */
  notes: string[];
}

/** Express-like request of the verifier's proxy (pact-js parses bodies into `body`). */
interface ProxyRequest extends IncomingMessage {
  path: string;
  body?: unknown;
}
type Next = (error?: unknown) => void;

interface Pending {
  interaction: PactHttpInteraction;
  sentPlain?: ExactJson;
  energy?: { balance: bigint; costPerTx: bigint };
  status?: number;
  body?: string;
}

const STATE_SETUP_PATHS = ['/_pactSetup', '/_messages'];

/** What the state handlers have arranged since the last request: the states, the energy and this run's callBackIds. */
interface StateSession {
  states: ProviderState[];
  requestSeen: boolean;
  callBackIds: Map<string, string>;
  energy: Pending['energy'];
}

/**
 * One verification run's state between Pact's state handlers and its request filter: the states
 * arranged for the next request, the answers captured for the decrypted checks, the setup notes.
 */
class VerificationRun {
  readonly notes: string[] = [];
  readonly pending: Pending[] = [];
  readonly #options: PactVerifyOptions;
  readonly #profile: CryptoProfile;
  readonly #requestKey: RsaKey;
  readonly #nonce: () => string;
  readonly #send: typeof fetch;
  /** This run's suffix for callBackIds, closeSerialNos and unknown keys. */
  readonly #runId: string;
  readonly #session: StateSession = { states: [], requestSeen: false, callBackIds: new Map(), energy: undefined };
  readonly #client: ControlClient;
  readonly #byStates: Map<string, PactHttpInteraction>;
  readonly #cardBase: string;
  readonly #sameCardBase: boolean;

  constructor(options: PactVerifyOptions, contract: PactContract, profile: CryptoProfile, requestKey: RsaKey) {
    this.#options = options;
    this.#profile = profile;
    this.#requestKey = requestKey;
    this.#nonce = options.nonce ?? (() => randomBytes(4).toString('hex'));
    this.#send = options.fetch ?? fetch;
    this.#runId = this.#nonce();
    this.#client = this.#controlClient();
    this.#byStates = new Map(
      contract.http.map((interaction) => [
        interactionKey(
          interaction.path,
          interaction.states.map((state) => state.name),
        ),
        interaction,
      ]),
    );
    this.#cardBase = (options.cardBaseUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.#sameCardBase = this.#cardBase === options.baseUrl.replace(/\/+$/, '');
  }

  /** One handler per provider state name of the contract's HTTP interactions. */
  stateHandlers(contract: PactContract): Record<string, (params?: unknown) => Promise<undefined>> {
    const handlers: Record<string, (params?: unknown) => Promise<undefined>> = {};
    for (const interaction of contract.http) {
      for (const state of interaction.states) {
        handlers[state.name] = async () => {
          await this.#setUp(state);
          return undefined;
        };
      }
    }
    return handlers;
  }

  /** Provider states through the generated control-API client, sent with the verifier's fetch. */
  #controlClient(): ControlClient {
    return {
      baseUrl: this.#options.baseUrl,
      token: this.#options.controlToken ?? '',
      send: async (request) => {
        const response = await this.#send(request.url, {
          method: request.method,
          headers: request.headers,
          ...(request.body === undefined ? {} : { body: request.body }),
        });
        return { status: response.status, body: await response.text() };
      },
    };
  }

  async #control(answer: Promise<ControlAnswer<unknown>>): Promise<void> {
    const { request, status, text } = await answer;
    if (status !== 200)
      throw new Error(
        `control API ${request.method} ${request.url.slice(this.#options.baseUrl.replace(/\/+$/, '').length + '/__control'.length)} answered ${status}: ${text.slice(0, 200)}`,
      );
  }

  async #setUp(state: ProviderState): Promise<void> {
    const session = this.#session;
    if (session.requestSeen) Object.assign(session, { states: [], requestSeen: false, energy: undefined });
    session.states.push(state);
    const userId = this.#options.userId ?? Number(state.params.userId);
    const needsControl = state.kind === 'energy' || state.kind === 'card-open';
    if (needsControl && !this.#options.controlToken) {
      note(
        this.notes,
        `provider state "${state.name}" is not arranged: no --control-token (the provider must be in that state already)`,
      );
      return;
    }
    switch (state.kind) {
      case 'energy':
        // The contract's energy states carry numbers (contract.ts, states.energy): sent as they are.
        await this.#control(
          controlSetEnergy(this.#client, { userId }, {
            balance: state.params.balance,
            costPerTx: state.params.costPerTx,
          } as ControlEnergy),
        );
        session.energy = { balance: BigInt(state.params.balance ?? 0), costPerTx: BigInt(state.params.costPerTx ?? 1) };
        return;
      case 'card-open':
        await this.#control(
          controlOpenCard(this.#client, { userId }, {
            powerCardId: state.params.powerCardId,
            merchantUserId: state.params.merchantUserId,
          } as ControlCard),
        );
        return;
      case 'callback-id-unused':
        // ORDER-CALLBACK-ID: a service refuses a callBackId it has seen, so each run sends a fresh one.
        session.callBackIds.set(String(state.params.callBackId), `${String(state.params.callBackId)}-${this.#runId}`);
        return;
      case 'key-forbidden':
        // Pact reports a failed state handler only in its log: say here why the 403 interaction will fail.
        if (!this.#options.forbiddenKey)
          note(
            this.notes,
            `provider state "${state.name}" is not arranged: no --forbidden-key (a valid key without the permission, ERR-403)`,
          );
        return;
      default:
        return;
    }
  }

  /** Pact's request filter: the interaction the request stands for gets the real key and a fresh body. */
  readonly requestFilter = (req: ProxyRequest, res: ServerResponse, next: Next): void => {
    if (STATE_SETUP_PATHS.some((path) => req.path.startsWith(path))) return next();
    const session = this.#session;
    const stateNames = session.requestSeen ? [] : session.states.map((state) => state.name);
    session.requestSeen = true;
    const interaction = this.#byStates.get(interactionKey(req.path, stateNames));
    if (!interaction) {
      note(
        this.notes,
        `${req.method ?? '?'} ${req.path} with states [${stateNames.join('; ')}] is not an interaction of this spec's contract: sent as recorded (a pact from another spec version?)`,
      );
      return next();
    }
    const entry: Pending = { interaction, ...(session.energy ? { energy: session.energy } : {}) };
    this.pending.push(entry);
    if (interaction.apiKey) req.headers['x-api-key'] = this.#apiKeyFor(interaction.apiKey.role);
    const body = this.#body(interaction, entry);
    if (body) {
      req.body = body;
      req.headers['content-length'] = String(body.length);
    }
    capture(res, entry);
    if (interaction.base === 'card' && !this.#sameCardBase) {
      forward(this.#send, `${this.#cardBase}${req.url ?? req.path}`, req, body, res).catch(next);
      return;
    }
    next();
  };

  #apiKeyFor(role: 'valid' | 'unknown' | 'forbidden'): string {
    if (role === 'valid') return this.#options.apiKey;
    if (role === 'forbidden') return this.#options.forbiddenKey ?? '';
    return `wc-unknown-${this.#runId}-${this.#nonce()}`;
  }

  /** The request body to send: the plain example sealed afresh, or the card close JSON with this run's serial number. */
  #body(interaction: PactHttpInteraction, entry: Pending): Buffer | undefined {
    const options = this.#options;
    if (interaction.form) {
      const plain = substitute(interaction.form.plain, options.userId, this.#session.callBackIds);
      entry.sentPlain = plain;
      return Buffer.from(
        `data=${encodeURIComponent(sealJson(plain, 'request', this.#requestKey, { profile: this.#profile }))}`,
        'utf8',
      );
    }
    if (interaction.json) {
      const json: Record<string, unknown> = {
        ...interaction.json,
        closeSerialNo: `${String(interaction.json.closeSerialNo)}-${this.#runId}`,
      };
      if (options.userId !== undefined) json.merchantId = String(options.userId);
      return Buffer.from(JSON.stringify(json), 'utf8');
    }
    return undefined;
  }
}

/** The pact-js Verifier's options: local files or a broker, the state handlers and the request filter. */
function verifierOptions(
  options: PactVerifyOptions,
  contract: PactContract,
  run: VerificationRun,
): ConstructorParameters<typeof Verifier>[0] {
  const files = options.broker ? undefined : options.pactFiles;
  if (!options.broker && (!files || files.length === 0))
    throw new ConfigError('no-pacts', `no pact files of provider ${PACT_PROVIDER} to verify`);
  const broker = options.broker;
  return {
    provider: PACT_PROVIDER,
    providerBaseUrl: options.baseUrl,
    ...(files ? { pactUrls: files } : {}),
    ...(broker
      ? {
          pactBrokerUrl: broker.url,
          ...(broker.token ? { pactBrokerToken: broker.token } : {}),
          consumerVersionSelectors: broker.consumerVersionSelectors ?? [
            { mainBranch: true },
            { deployedOrReleased: true },
          ],
          publishVerificationResult: broker.publish ?? false,
          ...(broker.providerVersion ? { providerVersion: broker.providerVersion } : {}),
          ...(broker.providerBranch ? { providerVersionBranch: broker.providerBranch } : {}),
        }
      : {}),
    stateHandlers: run.stateHandlers(contract),
    requestFilter: run.requestFilter as never,
    logLevel: options.logLevel ?? 'warn',
    failIfNoPactsFound: true,
  };
}

/**
 * Runs the real Pact verifier (pact-js `Verifier`, Pact's Rust core) against a wallet service.
 * Provider states go to the control API (`PUT …/energy`, `POST …/cards`); a request filter
 * replaces the form field `data` with a fresh encryption of the interaction's plain example
 * (the pact can only hold a sample ciphertext) and injects the real X-API-KEY. Pact judges the
 * answers by the contract's matchers (envelope data: the Base64 pattern); the decrypted data is
 * checked here as well, against the plain schema (ENERGY-RES, ENERGY-FLOOR, ORDER-RES).
 *
 * @example await verifyPacts({ spec, baseUrl: 'http://127.0.0.1:8080', apiKey, key, controlToken, pactFiles })
 */
export async function verifyPacts(options: PactVerifyOptions): Promise<PactVerification> {
  const profile = options.profile ?? DEFAULT_PROFILE;
  const contract = buildPactContract(options.spec);
  const requestKey = keyFor(options.key, halfFor('request', 'encrypt', profile));
  if (!requestKey)
    throw new ConfigError(
      'wrong-key-half',
      `the profile encrypts requests with the private key: give the merchant's private key (--private-key)`,
    );
  const responseKey = keyFor(options.key, halfFor('response', 'decrypt', profile));
  const run = new VerificationRun(options, contract, profile, requestKey);
  const verifier = new Verifier(verifierOptions(options, contract, run));
  let pactPassed = true;
  let failures: string[] = [];
  try {
    await verifier.verifyProvider();
  } catch (error) {
    pactPassed = false;
    failures = describeFailure(error);
  }
  const checks = run.pending
    .filter((entry) => entry.interaction.response.plainSchema)
    .map((entry) => checkDecrypted(entry, responseKey, profile));
  return {
    passed: pactPassed && checks.every((check) => check.status !== 'failed'),
    pactPassed,
    failures,
    checks,
    notes: run.notes,
  };
}

function note(notes: string[], text: string): void {
  if (!notes.includes(text)) notes.push(text);
}

function interactionKey(path: string, stateNames: string[]): string {
  return `${path}\n${[...stateNames].sort().join('\n')}`;
}

function keyFor(key: RsaKey, half: 'public' | 'private'): RsaKey | undefined {
  if (half === 'public') return publicHalf(key);
  return key.half === 'private' ? key : undefined;
}

/** The plain example with the target's userId and this run's callBackIds. */
function substitute(plain: ExactJson, userId: number | undefined, callBackIds: Map<string, string>): ExactJson {
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain) || plain instanceof LosslessNumber)
    return plain;
  const out: Record<string, ExactJson> = { ...plain };
  if (userId !== undefined && 'userId' in out) out.userId = new LosslessNumber(String(userId));
  const callBackId = out.callBackId;
  if (typeof callBackId === 'string' && callBackIds.has(callBackId)) out.callBackId = callBackIds.get(callBackId)!;
  return out;
}

/** Keeps a copy of the answer's status and body as it streams to the verifier. */
function capture(res: ServerResponse, entry: Pending): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const keep = (chunk: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk);
    return write(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') keep(chunk);
    entry.status = res.statusCode;
    entry.body = Buffer.concat(chunks).toString('utf8');
    return end(chunk, ...rest);
  }) as typeof res.end;
}

/** Card close under another {card_base_url}: the filter sends it there and relays the answer. */
async function forward(
  send: typeof fetch,
  url: string,
  req: ProxyRequest,
  body: Buffer | undefined,
  res: ServerResponse,
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
  }
  const answer = await send(url, { method: req.method ?? 'POST', headers, ...(body ? { body } : {}) });
  const bytes = Buffer.from(await answer.arrayBuffer());
  res.statusCode = answer.status;
  const type = answer.headers.get('content-type');
  if (type) res.setHeader('content-type', type);
  res.end(bytes);
}

/** ENERGY-RES, ENERGY-FLOOR, ORDER-RES on the decrypted envelope data. */
function checkDecrypted(entry: Pending, key: RsaKey | undefined, profile: CryptoProfile): DecryptedCheck {
  const { interaction } = entry;
  const schema = interaction.response.plainSchema!;
  const result = (status: DecryptedCheck['status'], message: string): DecryptedCheck => ({
    interaction: interaction.description,
    status,
    message,
  });
  if (entry.body === undefined) return result('skipped', 'no answer was captured');
  if (!key)
    return result(
      'skipped',
      'the profile encrypts responses with the public key: decrypting them needs the private key (--private-key)',
    );
  let envelope: ExactJson;
  try {
    envelope = parseExactJson(entry.body);
  } catch {
    return result('failed', `HTTP ${entry.status ?? '?'}: the answer is not JSON`);
  }
  const data =
    envelope !== null &&
    typeof envelope === 'object' &&
    !Array.isArray(envelope) &&
    !(envelope instanceof LosslessNumber)
      ? envelope.data
      : undefined;
  if (typeof data !== 'string')
    return result('failed', `HTTP ${entry.status ?? '?'}: the envelope has no data to decrypt`);
  let plain: ExactJson;
  try {
    plain = openJson(data, 'response', key, { profile }).value;
  } catch (error) {
    return result('failed', `cannot decrypt data: ${(error as Error).message}`);
  }
  const issues = validateSchema(schema, plain);
  if (issues.length > 0)
    return result(
      'failed',
      `decrypted data breaks ${schema}: ${issues.map((issue) => `${issue.message} [${issue.rules.join(', ')}]`).join('; ')}`,
    );
  const fields = plain as Record<string, ExactJson>;
  if (schema === 'EnergyMaxCountResult' && entry.energy) {
    const expected = entry.energy.balance / entry.energy.costPerTx;
    const got =
      fields.energyMaxCount instanceof LosslessNumber ? fields.energyMaxCount.value : String(fields.energyMaxCount);
    if (got !== expected.toString())
      return result(
        'failed',
        `energyMaxCount ${got} is not floor(${entry.energy.balance} / ${entry.energy.costPerTx}) = ${expected} [ENERGY-FLOOR]`,
      );
  }
  const sent = entry.sentPlain as Record<string, ExactJson> | undefined;
  if (schema === 'OrderResult' && sent && fields.id !== sent.callBackId) {
    return result(
      'failed',
      `id ${JSON.stringify(fields.id)} is not the request's callBackId ${JSON.stringify(sent.callBackId)} [ORDER-RES]`,
    );
  }
  return result('passed', `decrypted data is a valid ${schema}`);
}

/** The verifier rejects with its JSON results (or a plain error): one line per mismatch. */
function describeFailure(error: unknown): string[] {
  const message = error instanceof Error ? error.message : String(error);
  try {
    const results = JSON.parse(message) as { errors?: Array<{ interaction?: string; mismatch?: unknown }> };
    const lines = (results.errors ?? []).map((entry) => `${entry.interaction ?? '?'}: ${summarise(entry.mismatch)}`);
    return lines.length > 0 ? lines : [message];
  } catch {
    return [message];
  }
}

function summarise(mismatch: unknown): string {
  const found = mismatch as
    { type?: string; mismatches?: Array<{ mismatch?: string; description?: string }>; message?: string } | undefined;
  if (found?.mismatches?.length)
    return found.mismatches.map((m) => m.mismatch ?? m.description ?? JSON.stringify(m)).join('; ');
  return found?.message ?? JSON.stringify(mismatch);
}
