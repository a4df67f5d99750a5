import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import type forge from 'node-forge';

// node-forge loads when a certificate is made (run --tls, tests), not with every CLI command.
const requireModule = createRequire(import.meta.url);
const forgeLib = (): typeof forge => requireModule('node-forge') as typeof forge;

/** A certificate and its private key, both PEM. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** A throwaway certificate authority: it signs server and client certificates for loopback TLS. */
export interface ThrowawayCa extends CertificatePair {
  /** Signs a certificate for `names` (host names and IP addresses) with this CA. */
  issue(options: IssueOptions): CertificatePair;
}

/** What an issued certificate says. */
interface IssueOptions {
  /** Host names and IP addresses the certificate is valid for (subjectAltName); the first is the CN. */
  names: string[];
  /** A client certificate (extendedKeyUsage clientAuth) instead of a server one. */
  client?: boolean;
  notBefore?: Date;
  notAfter?: Date;
}

const DAY = 86_400_000;

function keyPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  // node:crypto makes the key (fast); node-forge signs the X.509 certificate (node:crypto cannot).
  const forge = forgeLib();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e), pem };
}

function serial(): string {
  // Positive: the top bit clear.
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

/**
 * Makes a throwaway CA (valid from yesterday for 30 days by default) for `run --tls` and the tests.
 *
 * @example const ca = makeThrowawayCa(); const server = ca.issue({ names: ['127.0.0.1', 'localhost'] })
 */
export function makeThrowawayCa(commonName = 'wallet-conformance throwaway CA'): ThrowawayCa {
  const forge = forgeLib();
  const keys = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - DAY);
  cert.validity.notAfter = new Date(Date.now() + 30 * DAY);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(cert),
    key: keys.pem,
    issue(options) {
      const leafKeys = keyPair();
      const leaf = forge.pki.createCertificate();
      leaf.publicKey = leafKeys.publicKey;
      leaf.serialNumber = serial();
      leaf.validity.notBefore = options.notBefore ?? new Date(Date.now() - DAY);
      leaf.validity.notAfter = options.notAfter ?? new Date(Date.now() + 30 * DAY);
      leaf.setSubject([{ name: 'commonName', value: options.names[0] ?? 'wallet-conformance' }]);
      leaf.setIssuer(cert.subject.attributes);
      leaf.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', ...(options.client ? { clientAuth: true } : { serverAuth: true }) },
        {
          name: 'subjectAltName',
          altNames: options.names.map((name) => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })),
        },
        { name: 'authorityKeyIdentifier', keyIdentifier: cert.generateSubjectKeyIdentifier().getBytes() },
      ]);
      leaf.sign(keys.privateKey, forge.md.sha256.create());
      return { cert: forge.pki.certificateToPem(leaf), key: leafKeys.pem };
    },
  };
}
