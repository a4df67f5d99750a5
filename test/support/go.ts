/**
 * The Go toolchain for the tests that build Go programs (examples/go-receiver, the merchant guide's
 * Go recipe): whether this machine has one (.ci/run installs Debian's golang-go), and the
 * environment it runs in. Standard library only: no module is ever downloaded (GOPROXY=off), and
 * the build cache lives in the system's temp folder, so a read-only HOME does not matter.
 */
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
/** Why Go programs cannot be built here, or undefined when they can. */
export const goMissing: string | undefined = probe.error
  ? `go not found (${probe.error.message})`
  : probe.status !== 0
    ? `go version failed: ${probe.stderr.trim()}`
    : undefined;

/** The environment for `go build` / `go run`: offline, caches under the temp folder. */
export function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'wallet-conformance-go-cache'),
    GOPATH: process.env.GOPATH ?? join(tmpdir(), 'wallet-conformance-gopath'),
    GOPROXY: 'off',
    GOFLAGS: '-mod=mod',
    GOTOOLCHAIN: 'local',
  };
}
