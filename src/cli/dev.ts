// The developer's entry point (`npm run generate` runs it through tsx): the shipped CLI plus the
// commands that write into this repository's own tree. The installed CLI (bin/ → dist/cli/main.js)
// never registers them; tsconfig.build.json leaves this file and generate-command.ts out of dist/.
import { main, buildProgram } from './main.js';
import { registerGenerateCommand } from './generate-command.js';

/** The shipped program with the developer commands added. */
export async function buildDevProgram() {
  const program = await buildProgram();
  registerGenerateCommand(program, buildProgram);
  return program;
}

process.exitCode = await main(process.argv.slice(2), buildDevProgram);
