import { ConfigError } from '../core/errors.js';
import { stringifyExact, type ExactJson } from '../core/exact-json.js';
import type { CryptoProfile } from '../core/profile.js';
import { openJson } from '../crypto/codec.js';
import type { Capabilities } from './capabilities.js';
import { makeStrangerKeys } from './context.js';
import { readProbe, runDelivery } from './merchant-steps.js';
import { runRequest } from './service-steps.js';
import type { MerchantTarget, ServiceTarget } from './types.js';

/** One line, exit 2: the run cannot judge anything until the user fixes this. */
function stop(message: string): never {
  throw new ConfigError('preflight', `pre-flight: ${message}`);
}

/** Profiles a service might use instead of the one given, to name a profile mismatch precisely. */
function otherProfiles(profile: CryptoProfile): CryptoProfile[] {
  const paddings = ['pkcs1', 'oaep-sha1', 'oaep-sha256'] as const;
  const halves = ['private', 'public'] as const;
  return paddings.flatMap((padding) => halves.map((response) => ({ ...profile, padding, response })))
    .filter((p) => p.padding !== profile.padding || p.response !== profile.response);
}

/**
 * Before the service suites: one valid energy query. A wrong --api-key, a key pair the service does
 * not hold, or a profile other than the service's would otherwise show up as dozens of failures;
 * here each is one line naming the likely cause. A service that answers but breaks a rule is left
 * to the suites. Returns lines worth printing (warnings that do not stop the run).
 */
export async function preflightService(target: ServiceTarget, capabilities: Capabilities): Promise<string[]> {
  const warnings: string[] = [];
  const probed = Object.values(capabilities.routes);
  if (probed.length > 0 && probed.every((route) => route?.detail === 'answered 401')) {
    stop('--control-token is not accepted: every control API route answered 401');
  }
  const stranger = makeStrangerKeys(target.publicKey.bits);
  const exchange = await runRequest({ endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } }, target, { caseId: 'wc-preflight', saved: {} }, stranger);
  const response = exchange.response;
  if (!response) stop(`--base-url ${target.baseUrl} did not answer a valid energy query: ${exchange.error ?? 'no answer'}`);
  if (response.status === 401) stop('--api-key is not accepted: a valid energy query got HTTP 401 (check the key and its validity window)');
  if (response.status === 403) stop('--api-key lacks the permission for the energy query: a valid query got HTTP 403');
  if (response.status === 404) stop(`--base-url looks wrong: POST ${exchange.request.url} answered 404 (the base URL is what comes before /api/v1/...)`);
  const envelope = response.json as { code?: unknown; message?: unknown } | undefined;
  const code = envelope && typeof envelope === 'object' ? String(envelope.code) : undefined;
  if (response.status === 200 && code !== undefined && code !== '0') {
    stop(`the service refused a valid energy query (code ${code}: ${String(envelope?.message ?? '')}): it most likely cannot decrypt our request; check --public-key (the merchant's public key) and --profile (padding; which half encrypts requests: ${target.profile.request})`);
  }
  if (response.decryptError && typeof (envelope as { data?: unknown } | undefined)?.data === 'string') {
    const data = (envelope as { data: string }).data;
    for (const profile of otherProfiles(target.profile)) {
      try {
        openJson(data, 'response', target.publicKey, { profile });
        stop(`the answer decrypts only with another profile (padding: ${profile.padding}, response: ${profile.response}); set them in --profile`);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
      }
    }
    warnings.push(`pre-flight: the answer to a valid energy query does not decrypt with the merchant's key (${response.decryptError}); the suites will report it`);
  }
  return warnings;
}

/**
 * Before the merchant suites: the probe (when given) has the documented shape, and one valid
 * callback is acknowledged. A 401 to our own --api-key, or an answer that says the body could not
 * be decrypted, ends the run with one line.
 */
export async function preflightMerchant(target: MerchantTarget): Promise<string[]> {
  const warnings: string[] = [];
  if (target.probeUrl || target.probeCmd) {
    try {
      await readProbe(target);
    } catch (error) {
      stop((error as Error).message);
    }
  }
  const stranger = makeStrangerKeys(target.privateKey.bits);
  const { exchanges } = await runDelivery({ type: 1 }, target, { caseId: 'wc-preflight', saved: {} }, new Map(), stranger);
  const exchange = exchanges[0];
  const response = exchange?.response;
  if (!response) stop(`--callback-url ${target.callbackUrl} did not answer a valid callback: ${exchange?.error ?? 'no answer'}`);
  if (response.status === 401) stop('--api-key is not accepted: the merchant answered a valid callback with HTTP 401 (check the key and its validity window)');
  const errCode = response.json && typeof response.json === 'object' ? stringifyExact((response.json as Record<string, ExactJson>).errCode ?? null) : undefined;
  if (response.status !== 200 || errCode === undefined || Number(errCode) !== 0) {
    if (/decrypt|padding|wrong[- ]key|\bkey pair\b|\brsa\b|cipher/i.test(response.body)) {
      stop(`the merchant could not decrypt a valid callback (HTTP ${response.status}: ${response.body.slice(0, 120)}): check --private-key (the half the service encrypts callbacks with) and --profile (padding: ${target.profile.padding}, callback: ${target.profile.callback})`);
    }
    warnings.push(`pre-flight: the merchant did not acknowledge a valid callback (HTTP ${response.status}: ${response.body.slice(0, 120)}); the suites will report it`);
  }
  return warnings;
}
