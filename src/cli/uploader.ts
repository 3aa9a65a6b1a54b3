// `mainline-upload`: the client commands alone (`upload`, `test`, their help), for CI jobs that only send
// test results. scripts/build.mjs bundles this module and what it imports (src/cli and src/domain/ci-env,
// Node built-ins only) into one dependency-free file, dist/mainline-upload.mjs, copied to
// packages/uploader/ (the `mainline-upload` package and the GitHub Action's uploader). It behaves as
// `mainline upload` and `mainline test` do; keep it free of imports that reach the server or a database.
import { CliError } from './client.ts';
import { testCommand } from './test-command.ts';
import { clientContext, type Out, upload } from './upload.ts';
import { asksForHelp, COMMAND_USAGE } from './usage.ts';

const NAME = 'mainline-upload';

/** `mainline upload …` in a help text becomes `mainline-upload upload …`. */
function ownUsage(text: string): string {
  return text.replace(/\bmainline (upload|test)\b/g, `${NAME} $1`);
}

export const UPLOADER_USAGE = `Usage: ${NAME} <command> [options]

Sends JUnit XML test results to a Mainline server from CI (the client commands of \`mainline\`, alone).

Commands:
  upload --junit <glob> [options]
                                 send JUnit XML reports; exits 0 once the server accepted them
  test [upload options] -- <command…>
                                 run the command, upload its JUnit reports, and exit 0 when every
                                 failed test is quarantined (else with the command's exit code)
  help [<command>]               show this text, or a command's own (also: <command> --help)
  --version                      print the version

The server, token and organization come from --url, --token, --org or MAINLINE_URL, MAINLINE_TOKEN,
MAINLINE_ORG; the repository, branch and commit from the CI's environment or git.
${NAME} upload --help lists every option.`;

const COMMANDS = ['upload', 'test'] as const;

function usageOf(command: string): string | undefined {
  return (COMMANDS as readonly string[]).includes(command)
    ? ownUsage(COMMAND_USAGE[command] as string)
    : undefined;
}

/** Prints a failure as `mainline-upload: <message>`; resolves to the exit code. */
function report(error: unknown, out: Out, usage: string): number {
  if (error instanceof CliError) {
    out.err(`${NAME}: ${error.message}${error.showUsage ? `\n\n${usage}` : ''}`);
    return error.exitCode;
  }
  const e = error as NodeJS.ErrnoException;
  if (e.code?.startsWith('ERR_PARSE_ARGS_')) {
    out.err(`${NAME}: ${e.message}\n\n${usage}`);
    return 2;
  }
  out.err(`${NAME}: ${e.stack ?? String(error)}`);
  return 1;
}

/** Runs one `mainline-upload` command line; resolves to the process exit code. */
export async function uploaderMain(argv: string[], out: Out, version: string): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    out.log(UPLOADER_USAGE);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    out.log(version);
    return 0;
  }
  if (command === 'help') {
    const text = rest[0] === undefined ? UPLOADER_USAGE : usageOf(rest[0]);
    if (text !== undefined) {
      out.log(text);
      return 0;
    }
    return report(new CliError(`no help for "${rest[0]}": unknown command`, 2, true), out, UPLOADER_USAGE);
  }
  const usage = usageOf(command);
  if (usage === undefined) {
    const hint = ['serve', 'migrate', 'token', 'github', 'demo'].includes(command)
      ? ` (${NAME} only uploads; "${command}" is a command of the full \`mainline\` package)`
      : '';
    return report(new CliError(`unknown command "${command}"${hint}`, 2, true), out, UPLOADER_USAGE);
  }
  if (asksForHelp(rest)) {
    out.log(usage);
    return 0;
  }
  try {
    const ctx = clientContext(out);
    return await (command === 'upload' ? upload(rest, ctx) : testCommand(rest, ctx));
  } catch (error) {
    // The messages of the shared commands say `mainline`; this command is `mainline-upload`.
    if (error instanceof CliError) error.message = ownUsage(error.message);
    return report(error, out, usage);
  }
}
