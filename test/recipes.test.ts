// Every decryption recipe of the merchant guide runs. Each ```java, ```python, ```js and ```go block
// under a `<!-- recipe: LANGUAGE FILE -->` line of docs/merchant-guide.md is taken from the page as
// written, wrapped in a small program of its language that feeds it bodies, and compiled or run:
// - the bodies the toolkit sealed as the service does (1024- and 2048-bit keys, several blocks,
//   2-, 3- and 4-byte characters) must come out byte for byte;
// - the bodies the guide's table refuses (line-wrapped with \r\n and with \n, unpadded, URL-safe,
//   '+' turned into a space by a form decoder, sealed by a foreign key pair) must be refused: a
//   recipe that opens one fails here.
// FILE is the program that holds the same function (examples/decrypt/, examples/go-receiver/): the
// test checks it does, line for line, so the page and the programs cannot drift apart.
// A language is skipped only when its toolchain is missing (the reason is in the test's title);
// .ci/run installs them all, so CI never skips.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey } from '../src/crypto/keys.js';
import { sealCallback } from '../src/wire/callback-delivery.js';
import { goEnv, goMissing } from './support/go.js';
import { ROOT } from './support/cli.js';

const GUIDE = readFileSync(join(ROOT, 'docs/merchant-guide.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'wc-recipes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Language = 'java' | 'python' | 'node' | 'go';
const FENCE: Record<Language, string> = { java: 'java', python: 'python', node: 'js', go: 'go' };

/** The recipe blocks of the guide: language, the program that holds the same code, the code. */
const RECIPES = [...GUIDE.matchAll(/^<!-- recipe: (\S+) (\S+) -->\n```(\S+)\n([\s\S]*?)^```$/gm)].map((m) => ({
  language: m[1] as Language,
  file: m[2]!,
  fence: m[3]!,
  code: m[4]!,
}));

/** Why a toolchain cannot run here, or undefined when it can. */
function missing(command: string, args: string[], what: string): string | undefined {
  const probe = spawnSync(command, args, { encoding: 'utf8' });
  if (probe.error) return `${what}: ${command} not found`;
  return probe.status === 0 ? undefined : `${what}: ${(probe.stderr || probe.stdout).trim().split('\n').at(-1) ?? ''}`;
}
const MISSING: Record<Language, string | undefined> = {
  java: missing('javac', ['-version'], 'the JDK is missing'),
  python: missing(
    process.env.DOUBLES_PYTHON ?? 'python3',
    ['-c', 'import cryptography'],
    'python3 with cryptography is missing',
  ),
  node: undefined,
  go: goMissing,
};

/** A payload of several blocks at every key size, with 2-, 3- and 4-byte characters and an amount a float cannot hold. */
const plain = () =>
  `{"type":1,"requestUUID":"${randomUUID()}","trackingId":"dep-7f3a9c","tenantUserId":"é€𝄞-20931","business":0,"txid":"${'9f2c'.repeat(40)}","chain":"TRON","symbol":"USDT","toAddress":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE","amount":12345678901234567890.123}`;

/** A body holding '+', '/' and a trailing '=' (so every mangling below changes it), and its plaintext. */
function seal(privatePem: string): { text: string; body: string } {
  for (;;) {
    const text = plain();
    const body = sealCallback(text, parseKey(privatePem, { expect: 'private' }));
    if (body.includes('+') && body.includes('/') && body.endsWith('=')) return { text, body };
  }
}

const wrap = (body: string, width: number, end: string) =>
  body.replace(new RegExp(`(.{${width}})(?!$)`, 'g'), `$1${end}`);

const ours = [1024, 2048].map((bits) => ({ bits, pair: generateMerchantKeyPair(bits) }));
const foreign = generateMerchantKeyPair(1024);
const valid = ours.map(({ bits, pair }) => ({ name: `valid, ${bits}-bit key`, ...seal(pair.privatePem), open: true }));
const base = valid[0]!;
/** Each body, whether the recipe must open it, and (opened) the text it must give back. */
const VECTORS: Array<{ name: string; body: string; text?: string; open: boolean }> = [
  ...valid,
  { name: 'line-wrapped at 76 with \\r\\n (MIME)', body: wrap(base.body, 76, '\r\n'), open: false },
  { name: 'line-wrapped at 64 with \\n (PEM)', body: wrap(base.body, 64, '\n'), open: false },
  { name: 'unpadded (the trailing = dropped)', body: base.body.replace(/=+$/, ''), open: false },
  { name: "URL-safe alphabet ('-' and '_')", body: base.body.replace(/\+/g, '-').replace(/\//g, '_'), open: false },
  { name: "'+' turned into a space by a form decoder", body: base.body.replace(/\+/g, ' '), open: false },
  { name: 'sealed by a foreign key pair', body: seal(foreign.privatePem).body, open: false },
];

/** The program around a recipe: reads the public key (argv) and each body file, prints OK <base64 of the plaintext> or REFUSED <why>. */
const HARNESS: Record<
  Language,
  { files: (code: string) => Record<string, string>; run: (work: string, args: string[]) => SpawnSyncReturns<string> }
> = {
  java: {
    files: (code) => ({
      'Recipe.java': `import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.*;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import javax.crypto.Cipher;

public class Recipe {
${code}
    public static void main(String[] args) throws Exception {
        String der = Files.readString(Path.of(args[0])).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\\\s", "");
        RSAPublicKey key = (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(der)));
        for (int i = 1; i < args.length; i++) {
            String body = new String(Files.readAllBytes(Path.of(args[i])), StandardCharsets.US_ASCII);
            try {
                System.out.println("OK " + Base64.getEncoder().encodeToString(openCallback(body, key)));
            } catch (Exception error) {
                System.out.println("REFUSED " + String.valueOf(error).replace('\\n', ' '));
            }
        }
    }
}
`,
    }),
    run: (work, args) => spawnSync('java', ['Recipe.java', ...args], { cwd: work, encoding: 'utf8', timeout: 120_000 }),
  },
  python: {
    files: (code) => ({
      'recipe.py': `import base64
import json
import sys
from decimal import Decimal

from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.serialization import load_pem_public_key

${code}

key = load_pem_public_key(open(sys.argv[1], "rb").read())
for path in sys.argv[2:]:
    try:
        print("OK " + base64.b64encode(open_callback(open(path, "rb").read(), key)).decode())
    except Exception as error:
        print("REFUSED " + repr(error).replace("\\n", " "))
`,
    }),
    run: (work, args) =>
      spawnSync(process.env.DOUBLES_PYTHON ?? 'python3', ['recipe.py', ...args], {
        cwd: work,
        encoding: 'utf8',
        timeout: 60_000,
      }),
  },
  node: {
    files: (code) => ({
      'recipe.mjs': `import { constants, createPublicKey, publicDecrypt } from 'node:crypto';
import { readFileSync } from 'node:fs';

${code}
const key = createPublicKey(readFileSync(process.argv[2], 'utf8'));
for (const path of process.argv.slice(3)) {
  try {
    console.log('OK ' + openCallback(readFileSync(path, 'latin1'), key).toString('base64'));
  } catch (error) {
    console.log('REFUSED ' + String(error).replace(/\\n/g, ' '));
  }
}
`,
    }),
    run: (work, args) =>
      spawnSync(process.execPath, ['recipe.mjs', ...args], { cwd: work, encoding: 'utf8', timeout: 60_000 }),
  },
  go: {
    files: (code) => ({
      'go.mod': 'module recipe\n\ngo 1.19\n',
      'recipe.go': `package main\n\n${code}`,
      'main.go': `package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	block, _ := pem.Decode(data)
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		panic(err)
	}
	for _, path := range os.Args[2:] {
		body, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		if plain, err := openCallback(body, key.(*rsa.PublicKey)); err != nil {
			fmt.Println("REFUSED " + strings.ReplaceAll(err.Error(), "\\n", " "))
		} else {
			fmt.Println("OK " + base64.StdEncoding.EncodeToString(plain))
		}
	}
}
`,
    }),
    run: (work, args) => {
      const build = spawnSync('go', ['build', '-o', 'recipe', '.'], {
        cwd: work,
        env: goEnv(),
        encoding: 'utf8',
        timeout: 180_000,
      });
      return build.status === 0
        ? spawnSync(join(work, 'recipe'), args, { cwd: work, encoding: 'utf8', timeout: 60_000 })
        : build;
    },
  },
};

/** Lines trimmed, blank ones dropped: the block as it reads, whatever its indentation in a program. */
const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

describe("the merchant guide's recipes", () => {
  it('has one recipe per language, each marked with the program that holds it', () => {
    expect(RECIPES.map((recipe) => [recipe.language, recipe.fence])).toEqual(
      (['java', 'python', 'node', 'go'] as const).map((language) => [language, FENCE[language]]),
    );
  });

  it('has the same code in each program as on the page, line for line', () => {
    for (const recipe of RECIPES) {
      const program = lines(readFileSync(join(ROOT, recipe.file), 'utf8')).join('\n');
      expect(program, `${recipe.file} differs from the guide's ${recipe.language} recipe`).toContain(
        lines(recipe.code).join('\n'),
      );
    }
  });

  for (const recipe of RECIPES) {
    const why = MISSING[recipe.language];
    it.skipIf(why !== undefined)(
      `the ${recipe.language} recipe opens the valid bodies byte for byte and refuses each body the table refuses${why ? ` (skipped: ${why})` : ''}`,
      () => {
        const work = join(dir, recipe.language);
        mkdirSync(work);
        for (const [name, text] of Object.entries(HARNESS[recipe.language].files(recipe.code)))
          writeFileSync(join(work, name), text);
        const args: string[] = [];
        for (const [i, vector] of VECTORS.entries()) {
          writeFileSync(join(work, `body-${i}.txt`), vector.body);
          args.push(`body-${i}.txt`);
        }
        // Each valid body with its own key; every refusal vector was made with (or against) the 1024-bit one.
        const outputs = VECTORS.map((vector, i) => {
          const bits = vector.name.includes('2048') ? 2048 : 1024;
          writeFileSync(join(work, `public-${bits}.pem`), ours.find((key) => key.bits === bits)!.pair.publicPem);
          return { vector, bits, arg: args[i]! };
        });
        for (const bits of [1024, 2048]) {
          const mine = outputs.filter((output) => output.bits === bits);
          const run = HARNESS[recipe.language].run(work, [`public-${bits}.pem`, ...mine.map((output) => output.arg)]);
          expect(run.status, `${recipe.language} recipe: ${run.stderr}${run.error?.message ?? ''}`).toBe(0);
          const answers = run.stdout.trimEnd().split('\n');
          expect(answers, run.stdout).toHaveLength(mine.length);
          for (const [i, { vector }] of mine.entries()) {
            const answer = answers[i]!;
            if (vector.open)
              expect(answer, vector.name).toBe(`OK ${Buffer.from(vector.text!, 'utf8').toString('base64')}`);
            else expect(answer, `${vector.name}: the guide's table refuses this body`).toMatch(/^REFUSED /);
          }
        }
      },
      240_000,
    );
  }
});
