/**
 * The options and value parsers `vrp` commands of several groups share, each defined once:
 * `--json`, how to reach a node (`--connect-to`, `--cacert`), ports and counts, and reading the
 * files options name. It imports no vrpkit package, so a command group still loads only the
 * packages it uses (main.ts). The options every verb of one group shares (which node, platform
 * or gate store) are in that group's `options.ts`.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import { CliError } from './errors.js';

/** `--json`: what the command prints instead of text (every error is `{"error":{code,message}}` on stdout with it). */
export function jsonOption(help = 'print JSON'): Option {
  return new Option('--json', help);
}

/** A positive whole number, at most seven digits (counts, sizes, timeouts). */
export function positiveInt(v: string): number {
  if (!/^[1-9]\d{0,6}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

/**
 * `--shutdown-grace <seconds>` (issue 36 defect 2): on SIGTERM the server stops accepting and the
 * requests in flight have this long to finish before their connections are closed.
 */
export function shutdownGraceOption(): Option {
  // No default here: the server's own (`DEFAULT_SHUTDOWN_GRACE_SECONDS`, 10 s) applies, and this file imports no vrpkit package.
  return new Option(
    '--shutdown-grace <seconds>',
    'on SIGTERM/SIGINT, how long the requests in flight may take to finish (0 to 3600; default 10)',
  ).argParser((v: string) => {
    if (!/^\d{1,4}$/.test(v) || Number(v) > 3600) throw new InvalidArgumentError('whole seconds from 0 to 3600');
    return Number(v);
  });
}

/** A `--port` value: 0 (ephemeral) to 65535. */
export function port(v: string): number {
  const n = Number(v);
  if (!/^\d{1,5}$/.test(v) || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

/**
 * A `--connect-to` entry, curl's HOST:PORT:ADDR:PORT. A VRP origin is `https://{domain}`, port
 * 443 (Core VRP v0.1 §2), so an entry for any other port would never be dialled: refused, not ignored.
 */
export function collectConnectTo(v: string, prev: string[] = []): string[] {
  const m = /^[^:\s]+:(\d{1,5}):\S+:\d{1,5}$/.exec(v);
  if (!m) throw new InvalidArgumentError(`${v} is not HOST:443:ADDR:PORT`);
  if (m[1] !== '443')
    throw new InvalidArgumentError(`${v} maps port ${m[1]}, but a node's origin is https://HOST on port 443: use HOST:443:ADDR:PORT`);
  return [...prev, v];
}

/** `--connect-to HOST:443:ADDR:PORT` (repeatable), how `vrp verify` and `vrp conformance` reach a node on another address. */
export function connectToOption(): Option {
  return new Option(
    '--connect-to <HOST:443:ADDR:PORT>',
    'dial ADDR:PORT for HOST:443, keeping the name for TLS (repeatable, like curl)',
  ).argParser(collectConnectTo);
}

/** `--cacert FILE`: an extra trusted CA certificate (PEM), e.g. a dev node's. */
export function cacertOption(help = 'extra trusted CA certificate (PEM)'): Option {
  return new Option('--cacert <file>', help);
}

/** The text of a file an option names; `file_unreadable` (exit 64) when it cannot be read. */
export function readOptionFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('file_unreadable', { what, file, reason: (e as NodeJS.ErrnoException).code ?? 'error' });
  }
}

/** The JSON document of a file an option names; `file_not_json` (exit 64) when it is not JSON. */
export function readJsonOptionFile(file: string, what: string): unknown {
  const text = readOptionFile(file, what);
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('file_not_json', { what, file });
  }
}
