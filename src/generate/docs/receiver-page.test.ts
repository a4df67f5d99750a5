import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, RULES_PATH, SPEC_PATH } from '../../platform/package-paths.js';
import { parseRuleCatalog } from '../../core/rules.js';
import { generateMerchantKeyPair } from '../../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../../crypto/keys.js';
import { CHECKS } from '../../runner/checks/index.js';
import { loadSuites } from '../../runner/suite.js';
import { generateDocs } from './site.js';
import { RECEIVER_EXAMPLE } from './receiver-page.js';
import { parseSpec } from '../../spec/document.js';

const key = parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' }) as RsaPrivateKey;
const files = new Map(
  generateDocs(
    parseSpec(readFileSync(SPEC_PATH, 'utf8')),
    parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')),
    loadSuites(),
    {
      checks: CHECKS,
      demo: { key },
    },
  ).map((file) => [file.path, file.contents]),
);
const markdown = files.get('receiver.md') ?? '';

describe('the docs page "Writing a callback receiver"', () => {
  it('lists the seven callback types, each linking to its page, with required fields in bold', () => {
    for (const type of [1, 2, 3, 4, 5, 6, 7])
      expect(markdown).toMatch(
        new RegExp(`<a id="receiver-type-${type}"></a>${type} \\| \\[[^\\]]+\\]\\(callback-${type}-[a-z-]+\\.md\\)`),
      );
    expect(markdown).toMatch(/receiver-type-3"><\/a>3 \|[^\n]*\*\*callBackId\*\*[^\n]*\*\*amount\*\*/);
  });

  it("states the probe's contract and shows its answer with the spec examples' exact digits", () => {
    expect(markdown).toContain('`GET U` answering `{"processed": [...]}`');
    expect(markdown).toContain('"amount":12345678901234567890.123');
    expect(markdown).toContain('"amount":"250.000001"');
  });

  it("shows the merchant guide's receiver, the one a test runs", () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'docs/merchant-guide.md'), 'utf8');
    expect(/```js\n(\/\/ receiver\.mjs[\s\S]*?)\n```/.exec(readme)?.[1]).toBe(RECEIVER_EXAMPLE);
    expect(files.get('receiver.html')).toContain('createCallbackHandler');
    expect(files.get('index.html')).toContain('href="receiver.html"');
  });
});
