import { parseArgs } from 'node:util';
import { createToken, listTokens, revokeToken } from '../app/tokens.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { AppError } from '../domain/errors.ts';
import { startServer } from '../main.ts';
import { MigrationError, migrateToLatest } from '../store/migrate.ts';
import { CliError } from './client.ts';
import { demoCommand } from './demo-command.ts';
import { formatTokenTable } from './format.ts';
import { GITHUB_USAGE, githubCommand } from './github-command.ts';
import { testCommand } from './test-command.ts';
import { clientContext, upload } from './upload.ts';

const USAGE = `Usage: mainline <command> [options]

Commands:
  serve                          start the server (the default; what npm start runs)
  migrate                        apply pending database migrations and exit
  token create --org <slug>      create a token (and the organization if needed); prints the token once
         [--name <label>] [--json]
  token list [--org <slug>] [--json]
                                 list tokens (never the tokens themselves)
  token revoke <token-id>        revoke a token; requests with it get 401 at once
${GITHUB_USAGE}
  upload --junit <glob> [options]
                                 send JUnit XML reports to a Mainline server (from CI)
  test [upload options] -- <command…>
                                 run the command, upload its JUnit reports, and exit 0 when
                                 every failed test is quarantined
  demo [--port <n>] [--exit]     start a server with a local git repository, run PRs (flaky, broken,
                                 conflicting) through the merge queue with a built-in CI, and print
                                 curl commands to explore the results (mainline demo --help)
  help                           show this text

Upload options (flags win over what is detected from the CI's environment):
  --junit <glob>                 JUnit XML files, e.g. 'reports/**/*.xml' (repeatable; required)
  --org <slug>                   organization (default: MAINLINE_ORG)
  --token <token>                API token (default: MAINLINE_TOKEN)
  --url <url>                    server (default: MAINLINE_URL, else http://127.0.0.1:8080)
  --repo <host/owner/name>       repository; owner/name means github.com
  --branch <name>  --sha <commit>  --pr <number>
  --job-name <name>  --job-url <url>  --variant <name>  --upload-key <key>
  --codeowners <path>            default: CODEOWNERS in .github/, the root, docs/ or .gitlab/
  --json                         print the server's response as JSON

Configuration comes from environment variables; see README.md.`;

/** Thrown for a command line that cannot be understood; exits 2 with the usage text. */
class UsageError extends Error {}

type Out = { log: (s: string) => void; err: (s: string) => void };
const defaultOut: Out = {
  log: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
};

async function withDatabase<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const database = openDatabase(loadConfig());
  try {
    await migrateToLatest(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

async function serve(): Promise<number> {
  const server = await startServer(loadConfig());
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      server.app.log.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    server.app.log.info(`${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return new Promise<number>(() => undefined);
}

async function migrate(out: Out): Promise<number> {
  const database = openDatabase(loadConfig());
  try {
    const report = await migrateToLatest(database);
    out.log(
      report.applied.length === 0
        ? `${database.engine} database at ${database.location} is up to date (${report.known.length} migrations)`
        : `applied ${report.applied.join(', ')} to the ${database.engine} database at ${database.location}`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

async function token(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { org: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [verb, ...rest] = positionals;
  if (verb === 'create') {
    if (values.org === undefined) throw new UsageError('token create needs --org <slug>');
    const created = await withDatabase((d) =>
      createToken(d.db, { orgSlug: values.org as string, name: values.name ?? 'cli', now: Date.now() }),
    );
    if (values.json) out.log(JSON.stringify({ id: created.id, org: created.orgSlug, token: created.token }));
    else out.log(created.token);
    out.err(
      `${created.orgCreated ? `created organization "${created.orgSlug}" and ` : ''}created token ${created.id} for "${created.orgSlug}". It is shown only this once: store it now.`,
    );
    return 0;
  }
  if (verb === 'list') {
    const rows = await withDatabase((d) => listTokens(d.db, values.org));
    out.log(values.json ? JSON.stringify(rows) : formatTokenTable(rows));
    return 0;
  }
  if (verb === 'revoke') {
    const id = rest[0];
    if (id === undefined) throw new UsageError('token revoke needs the token id (see mainline token list)');
    await withDatabase((d) => revokeToken(d.db, id, Date.now()));
    out.err(`revoked token ${id}`);
    return 0;
  }
  throw new UsageError(`unknown token command "${verb ?? ''}"`);
}

/** Runs one command line; resolves to the process exit code. */
export async function main(argv: string[], out: Out = defaultOut): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve();
      case 'migrate':
        return await migrate(out);
      case 'token':
        return await token(rest, out);
      case 'github':
        return await githubCommand(rest, out);
      case 'upload':
        return await upload(rest, clientContext(out));
      case 'test':
        return await testCommand(rest, clientContext(out));
      case 'demo':
        return await demoCommand(rest, out);
      case 'help':
      case '--help':
      case '-h':
        out.log(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    return report(error, out);
  }
}

function report(error: unknown, out: Out): number {
  if (error instanceof CliError) {
    out.err(`mainline: ${error.message}${error.showUsage ? `\n\n${USAGE}` : ''}`);
    return error.exitCode;
  }
  if (error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    out.err(`mainline: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (error instanceof ConfigError || error instanceof AppError || error instanceof MigrationError) {
    out.err(`mainline: ${error.message}`);
    return 1;
  }
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'EADDRINUSE') {
    out.err(`mainline: the address is already in use (${e.message}); set PORT or HOST to another one`);
    return 1;
  }
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND') {
    out.err(`mainline: cannot reach the database (${e.message}); check DATABASE_URL`);
    return 1;
  }
  out.err(`mainline: ${e.stack ?? String(error)}`);
  return 1;
}
