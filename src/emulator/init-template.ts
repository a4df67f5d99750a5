/** What the emulator.yaml of `emulator init` is filled with: the secrets init-files.ts generates and the caller's options. */
interface EmulatorYamlValues {
  /** X-Control-Token of the control API. */
  controlToken: string;
  /** The merchant's main key (every permission). */
  apiKey: string;
  /** A key valid now without any permission (ERR-403). */
  forbiddenKey: string;
  /** A key outside its validity window (ERR-401). */
  expiredKey: string;
  futureKey?: string;
  /** `store:` (default `emulator.sqlite` beside the config). */
  store?: string;
  /** `callbackUrl:` of the merchant (default http://127.0.0.1:9400/callback). */
  callbackUrl?: string;
  /** `port:` (default 8080). */
  port?: number;
}

/**
 * The commented emulator.yaml of `emulator init`: one merchant with a main key, a key without
 * permissions, an expired key, energy and two open cards. Pure text; its key files are named
 * merchant-private.pem and merchant-public.pem beside it.
 *
 * @example emulatorYaml({ controlToken: 't', apiKey: 'ak', forbiddenKey: 'f', expiredKey: 'e' }).startsWith('# wallet-conformance') // true
 */
export function emulatorYaml(values: EmulatorYamlValues): string {
  return `# wallet-conformance service emulator (npx wallet-conformance emulator --config THIS_FILE)
# Paths are relative to this file. The store keeps state across restarts: it is seeded from this
# file once (merchants' energy, cards) and wins afterwards; delete it to start afresh.
host: 127.0.0.1
port: ${values.port ?? 8080}                  # --port overrides; 0 picks a free port
store: '${values.store ?? 'emulator.sqlite'}'   # SQLite file, or ':memory:' for a throwaway run
bodyLimit: 65536              # bytes; larger bodies get 413 (U-LIMITS)
headersTimeoutMs: 5000        # slow clients are cut
requestTimeoutMs: 10000
control:
  token: ${values.controlToken}   # X-Control-Token of the control API (/__control)
callbacks:
  timeoutMs: 5000             # a callback target must answer within this time
  withdrawalDelayMs: 1000     # a withdrawal completes and its callback (type 3) is due after this
  retry:                      # U-RETRY: until errCode 0, never after
    initialDelayMs: 1000
    factor: 2
    maxDelayMs: 60000
    maxAttempts: 8
policies: {}                  # readings of the interface's open points (U-*): see docs/decisions/0040-open-points-emulator-policies.md
merchants:
  - userId: 10086
    apiKey: ${values.apiKey}                 # every permission
    apiKeyNotBefore: '2020-01-01T00:00:00Z'  # the main key's window (the older names apiKeyValidFrom/apiKeyValidUntil still work)
    apiKeyNotAfter: '2099-12-31T23:59:59Z'
    apiKeys:
      - key: ${values.forbiddenKey}          # valid, no permission: ERR-403
        permissions: []
      - key: ${values.expiredKey}            # outside its validity window: ERR-401
        permissions: [getEnergyMaxCount, withdrawWithoutVerify, closeCard]
        notAfter: '2020-01-01T00:00:00Z'${
          values.futureKey
            ? `
      - key: ${values.futureKey}             # valid only from 2999: ERR-401 until then
        permissions: [getEnergyMaxCount, withdrawWithoutVerify, closeCard]
        notBefore: '2999-01-01T00:00:00Z'`
            : ''
        }
    privateKey: merchant-private.pem      # the service's half
    publicKey: merchant-public.pem        # the merchant's half: encrypt requests with it
    profile: {}                           # crypto profile (inline, or a profile YAML path); defaults: pkcs1, request: public
    callbackUrl: ${values.callbackUrl ?? 'http://127.0.0.1:9400/callback'}
    energy:
      balance: 20000000                   # energyMaxCount = floor(balance / costPerTx) = 312
      costPerTx: 64000
    cards:
      - {powerCardId: pc-5500-0001, merchantUserId: u-1001, status: open}
      - {powerCardId: pc-5500-0002, merchantUserId: u-1001, status: open}
`;
}
