// The `mainline` command line. Each command's module is imported only when that command runs, so
// `mainline --help`, `mainline <command> --help`, `upload` and `test` never load the server, Fastify,
// the database drivers or the demo: they start in the time Node takes to start, plus their own code.
import { ConfigError } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { CliError } from './client.ts';
import { asksForHelp, COMMAND_USAGE, USAGE } from './usage.ts';

type Out = { log: (s: string) => void; err: (s: string) => void };
const defaultOut: Out = {
  log: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
};

/** Runs one command; its module is loaded here, on demand. */
async function run(command: string, rest: string[], out: Out): Promise<number> {
  switch (command) {
    case 'serve':
      return (await import('./server-commands.ts')).serve();
    case 'migrate':
      return (await import('./server-commands.ts')).migrate(out);
    case 'token':
      return (await import('./server-commands.ts')).token(rest, out);
    case 'github':
      return (await import('./github-command.ts')).githubCommand(rest, out);
    case 'gitlab':
      return (await import('./gitlab-command.ts')).gitlabCommand(rest, out);
    case 'upload': {
      const { clientContext, upload } = await import('./upload.ts');
      return upload(rest, clientContext(out));
    }
    case 'test': {
      const [{ clientContext }, { testCommand }] = await Promise.all([
        import('./upload.ts'),
        import('./test-command.ts'),
      ]);
      return testCommand(rest, clientContext(out));
    }
    case 'demo':
      return (await import('./demo-command.ts')).demoCommand(rest, out);
    default:
      throw new CliError(`unknown command "${command}"`, 2, true);
  }
}

/** Runs one command line; resolves to the process exit code. */
export async function main(argv: string[], out: Out = defaultOut): Promise<number> {
  const [command, ...rest] = argv;
  // Bare `mainline` explains itself; the server starts only when asked for (`mainline serve`).
  if (command === undefined || command === '--help' || command === '-h') {
    out.log(USAGE);
    return 0;
  }
  if (command === 'help') {
    const topic = rest[0];
    const text = topic === undefined ? USAGE : COMMAND_USAGE[topic];
    if (text === undefined)
      return report(new CliError(`no help for "${topic}": unknown command`, 2, true), out);
    out.log(text);
    return 0;
  }
  const usage = Object.hasOwn(COMMAND_USAGE, command) ? COMMAND_USAGE[command] : undefined;
  if (usage !== undefined && asksForHelp(rest)) {
    out.log(usage);
    return 0;
  }
  try {
    return await run(command, rest, out);
  } catch (error) {
    return report(error, out, usage);
  }
}

/** Prints a failure as `mainline: <message>` (with the usage text for a command line it could not understand). */
function report(error: unknown, out: Out, usage: string = USAGE): number {
  if (error instanceof CliError) {
    out.err(`mainline: ${error.message}${error.showUsage ? `\n\n${usage}` : ''}`);
    return error.exitCode;
  }
  const e = error as NodeJS.ErrnoException;
  if (e.code?.startsWith('ERR_PARSE_ARGS_')) {
    out.err(`mainline: ${e.message}\n\n${usage}`);
    return 2;
  }
  // MigrationError is matched by name: its module (kysely, the migrations) loads only with the database.
  if (error instanceof ConfigError || error instanceof AppError || e.name === 'MigrationError') {
    out.err(`mainline: ${e.message}`);
    return 1;
  }
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
