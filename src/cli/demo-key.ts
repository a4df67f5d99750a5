import { ConfigError } from '../core/errors.js';
import { readUserFile } from './io.js';

/**
 * How a demo key is recognised (docs/decisions/0076-secrets.md): its PEM file starts with this line,
 * which `keys generate --demo` and `docs` (for the key it publishes) write before the PEM block.
 * PEM readers skip text before `-----BEGIN`, so the file stays a usable key.
 */
const DEMO_KEY_MARKER = '# wallet-conformance demo key: published with the docs; never use it for real traffic';

/** The words that let `docs --demo-key` publish a key that carries no demo marker. */
const PUBLISH_CONSENT = 'I understand this key is public';

/** Does this key file text carry the demo marker (before its PEM block)? */
function isDemoKeyText(text: string): boolean {
  const head = text.split('-----BEGIN')[0] ?? '';
  return head.split(/\r?\n/).some((line) => line.trim() === DEMO_KEY_MARKER);
}

/** A PEM with the demo marker in front (once). */
export function markDemoKey(pem: string): string {
  return isDemoKeyText(pem) ? pem : `${DEMO_KEY_MARKER}\n${pem}`;
}

/**
 * `docs --demo-key FILE` publishes FILE's private half with the site: only a demo key, or any key
 * when `--publish-private-key` says the words of {@link PUBLISH_CONSENT}. One line, exit 2, otherwise.
 */
export function assertPublishable(file: string, consent: string | undefined): void {
  if (consent !== undefined && consent.trim() !== PUBLISH_CONSENT) {
    throw new ConfigError('bad-flag', `--publish-private-key takes the words "${PUBLISH_CONSENT}", not something else`);
  }
  if (consent !== undefined) return;
  if (isDemoKeyText(readUserFile(file, 'demo key').toString('utf8'))) return;
  throw new ConfigError(
    'not-a-demo-key',
    `--demo-key ${file} is not a demo key (its file has no "wallet-conformance demo key" line): the docs publish its private half. Make one with "keys generate --demo --out DIR", or, if this key may be public, add --publish-private-key "${PUBLISH_CONSENT}"`,
  );
}
