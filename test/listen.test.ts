import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startEmbedded } from '../src/cli/embedded.js';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { runSuites } from '../src/runner/engine.js';
import { controlEmitCallback, controlSetCallbackUrl } from '../src/generated/control-client.js';
import { send } from '../src/runner/http-client.js';
import { loadSuites, selectSuites } from '../src/runner/suite.js';
import { freePort } from './support/ports.js';

describe('verify service --listen: callbacks triggered by hand', () => {
  it('prompts the person, receives the callback and its retry, and judges them', async () => {
    const embedded = await startEmbedded();
    try {
      const port = await freePort();
      const { controlToken, ...service } = embedded.service;
      const suites = selectSuites(loadSuites(), { glob: 'service/callbacks' }).map((suite) => ({
        ...suite,
        cases: suite.cases.filter((c) => c.id === 'hand-triggered-callback'),
      }));
      const prompts: string[] = [];
      const report = await runSuites({
        target: { ...service, listenPort: port },
        suites,
        rules: parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')),
        onEvent: (event) => {
          if (event.kind !== 'prompt') return;
          prompts.push(event.text);
          // The "person": points the emulator's callbacks at the printed URL and makes it send one.
          const url = /(http:\/\/\S+)/.exec(event.text)![1]!;
          const client = { baseUrl: service.baseUrl, token: controlToken!, send };
          const merchant = { userId: service.userId! };
          void controlSetCallbackUrl(client, merchant, { url }).then(() =>
            controlEmitCallback(client, merchant, { type: 3, retryDelaysMs: [50] }),
          );
        },
      });
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toContain(`:${port}/`);
      expect(report.results.map((r) => [r.id, r.status, r.message])).toEqual(
        report.results.map((r) => [r.id, 'passed', r.message]),
      );
      expect(report.results).toHaveLength(5);
    } finally {
      await embedded.close();
    }
  }, 60_000);
});
