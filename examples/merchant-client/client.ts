// A merchant's client of the wallet service: what a merchant team writes, tested with no network
// by client.test.ts through the generated MSW handlers (wallet-conformance/msw).
import { LosslessNumber, openJson, parseKey, sealJson, type CryptoProfile, type ExactJson } from 'wallet-conformance';

/** A failure the service answered: an HTTP error (401/403/404) or a non-zero envelope code. */
export class WalletError extends Error {
  override readonly name = 'WalletError';
  constructor(
    /** HTTP status of the answer (200 for a failure envelope). */
    readonly status: number,
    /** Envelope code (e.g. 40011) or HTTP error code (e.g. "UNAUTHORIZED"). */
    readonly code: number | string,
    message: string,
  ) {
    super(`wallet: ${code} ${message}`);
  }

  /** Rule ids the service named in its message (`... [ORDER-TENANT-TYPE]`). */
  get rules(): string[] {
    return [...this.message.matchAll(/\[([A-Z0-9, -]+)\]/g)].flatMap((match) => match[1]!.split(', '));
  }
}

/** A withdrawal (a currency symbol) or an energy lease (ENERGY, with expiryHours). */
export interface Order {
  userId: number;
  tenantUserId: string;
  callBackId: string;
  symbol: string;
  chainName: string;
  toAddr: string;
  /** Exact decimal text: sent as a JSON number with these digits, never through a float. */
  amount: string;
  expiryHours?: number;
}

/** A client for the order endpoints: encrypts with the merchant's public key, decrypts the envelope. */
export function createWalletClient(options: {
  baseUrl: string;
  apiKey: string;
  publicKey: string;
  profile?: CryptoProfile;
}) {
  const key = parseKey(options.publicKey, { expect: 'public' });
  const crypto = options.profile ? { profile: options.profile } : {};

  async function call(path: string, plain: unknown): Promise<Record<string, ExactJson>> {
    const response = await fetch(`${options.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': options.apiKey },
      // URLSearchParams percent-encodes '+', '/' and '=' of the Base64 text.
      body: new URLSearchParams({ data: sealJson(plain, 'request', key, crypto) }),
    });
    const answer = (await response.json()) as { code: number | string; message: string; data?: string };
    if (response.status !== 200 || answer.code !== 0 || typeof answer.data !== 'string')
      throw new WalletError(response.status, answer.code, answer.message);
    return openJson(answer.data, 'response', key, crypto).value as Record<string, ExactJson>;
  }

  return {
    /** How many energy-lease transactions the merchant can support now (exact, as a bigint). */
    async getEnergyMaxCount(): Promise<bigint> {
      const result = await call('/api/v1/api/order/getEnergyMaxCount', { symbol: 'ENERGY', chainName: 'TRON' });
      return BigInt(String(result.energyMaxCount));
    },
    /** Submits a withdrawal or an energy lease; resolves to the service's confirmation. */
    async withdraw(order: Order): Promise<{ tenantUserId: bigint; id: string }> {
      const result = await call('/api/v1/api/order/withdrawWithoutVerify', {
        ...order,
        tenantType: 1,
        amount: new LosslessNumber(order.amount),
      });
      return { tenantUserId: BigInt(String(result.tenantUserId)), id: String(result.id) };
    },
  };
}
