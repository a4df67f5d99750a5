import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes `DIR/hide-NAME.cjs`, a preload (`node --require FILE`) that answers require(NAME) and
 * require(NAME/...) as Node does when the package is not installed (MODULE_NOT_FOUND), and returns
 * its path: how the tests show an optional package really is optional.
 */
export function hideRequiredPackage(dir: string, name: string): string {
  const file = join(dir, `hide-${name.replace(/[^a-z0-9-]/gi, '-')}.cjs`);
  writeFileSync(
    file,
    `const Module = require('node:module');
const resolve = Module._resolveFilename;
const NAME = ${JSON.stringify(name)};
Module._resolveFilename = function (request, ...rest) {
  if (request === NAME || request.startsWith(NAME + '/')) {
    const error = new Error("Cannot find module '" + request + "'");
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
`,
  );
  return file;
}

/**
 * Writes `DIR/hide-builtin-NAME.cjs`, a preload that makes `process.getBuiltinModule(ID)` answer as
 * a Node without that built-in does (undefined), and returns its path: how the tests reach the
 * path a Node without `node:sqlite` takes, on any Node.
 */
export function hideBuiltinModule(dir: string, id: string): string {
  const file = join(dir, `hide-builtin-${id.replace(/[^a-z0-9-]/gi, '-')}.cjs`);
  writeFileSync(
    file,
    `const get = process.getBuiltinModule;
const ID = ${JSON.stringify(id)};
if (typeof get === 'function')
  process.getBuiltinModule = function (request, ...rest) {
    return request === ID || 'node:' + request === ID ? undefined : get.call(this, request, ...rest);
  };
`,
  );
  return file;
}
