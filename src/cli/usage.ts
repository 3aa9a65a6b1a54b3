// The help texts of the `mainline` command. No imports: `mainline --help` and `mainline <command>
// --help` load this module and nothing else of the server.

const UPLOAD_OPTIONS = `Upload options (flags win over what is detected from the CI's environment):
  --junit <glob>                 JUnit XML files, e.g. 'reports/**/*.xml' (repeatable; required)
  --org <slug>                   organization (default: MAINLINE_ORG)
  --token <token>                API token (default: MAINLINE_TOKEN)
  --url <url>                    server (default: MAINLINE_URL, else http://127.0.0.1:8080)
  --repo <host/owner/name>       repository; owner/name means github.com
  --branch <name>  --sha <commit>  --pr <number>
  --job-name <name>  --job-url <url>  --variant <name>  --upload-key <key>
  --codeowners <path>            default: CODEOWNERS in .github/, the root, docs/ or .gitlab/
  --json                         print the server's response as JSON`;

const GITHUB_LINES = `  github connect --org <slug> --installation <id>
                                 bind a GitHub App installation to an organization: the account it is
                                 installed on (asked from GitHub) becomes that organization's
  github grant --org <slug> --owner <login>
                                 with a personal token: let the organization act on the GitHub user or
                                 organization <login> (one organization per account)
  github revoke --org <slug> --owner <login>
                                 take the account away from the organization
  github list [--org <slug>] [--json]
                                 the accounts each organization may act on`;

const GITLAB_LINES = `  gitlab grant --org <slug> --namespace <group[/subgroup] or user>
                                 let the organization act on the GitLab namespace's projects
                                 (exact path: a subgroup is granted on its own)
  gitlab revoke --org <slug> --namespace <path>
                                 take the namespace away from the organization
  gitlab list [--org <slug>] [--json]
                                 the namespaces each organization may act on`;

const TOKEN_LINES = `  token create --org <slug>      create a token (and the organization if needed); prints the token once
         [--name <label>] [--json]
  token list [--org <slug>] [--json]
                                 list tokens (never the tokens themselves)
  token revoke <token-id>        revoke a token; requests with it get 401 at once`;

export const USAGE = `Usage: mainline <command> [options]

Commands:
  serve                          start the server (what npm start runs)
  migrate                        apply pending database migrations and exit
${TOKEN_LINES}
${GITHUB_LINES}
${GITLAB_LINES}
  upload --junit <glob> [options]
                                 send JUnit XML reports to a Mainline server (from CI)
  test [upload options] -- <command…>
                                 run the command, upload its JUnit reports, and exit 0 when
                                 every failed test is quarantined
  demo [--port <n>] [--exit]     start a server with a local git repository, run PRs (flaky, broken,
                                 conflicting) through the merge queue with a built-in CI, and print
                                 curl commands to explore the results
  help [<command>]               show this text, or a command's own (also: mainline <command> --help)

${UPLOAD_OPTIONS}

Configuration comes from environment variables; see README.md.`;

const SERVE_USAGE = `Usage: mainline serve

Starts the server: migrates the database, then answers the API, the dashboard and /metrics, and runs
the merge-queue runner. SIGTERM or Ctrl-C stops it after in-flight requests finish.

Configuration comes from environment variables (README.md, "Configuration"), among them:
  HOST, PORT                     where to listen (default 127.0.0.1:8080)
  DATABASE_URL                   postgres://… for PostgreSQL; unset: SQLite under MAINLINE_DATA_DIR
  MAINLINE_DATA_DIR              the data folder (default ./data)
  MAINLINE_BOOTSTRAP_ORG, MAINLINE_BOOTSTRAP_TOKEN
                                 create an organization and its first token on start`;

const MIGRATE_USAGE = `Usage: mainline migrate

Applies pending database migrations (DATABASE_URL, else SQLite under MAINLINE_DATA_DIR) and exits.
mainline serve migrates on start as well.`;

const TOKEN_USAGE = `Usage: mainline token <create|list|revoke> [options]

${TOKEN_LINES}

Reads the database directly (DATABASE_URL, else SQLite under MAINLINE_DATA_DIR): run it where the
server's data is.`;

const GITHUB_USAGE = `Usage: mainline github <connect|grant|revoke|list> [options]

${GITHUB_LINES}

Reads the database directly, and the GitHub settings (MAINLINE_GITHUB_*) from the environment.`;

const GITLAB_USAGE = `Usage: mainline gitlab <grant|revoke|list> [options]

${GITLAB_LINES}

Reads the database directly, and the GitLab settings (MAINLINE_GITLAB_*) from the environment;
docs/gitlab.md says how to connect a GitLab instance.`;

const UPLOAD_USAGE = `Usage: mainline upload --junit <glob> [options]

Sends JUnit XML reports to a Mainline server, with the repository, branch and commit detected from the
CI's environment (GitHub Actions, GitLab, Buildkite, CircleCI, Jenkins, Azure, Bitbucket) or git.
Exits 0 once the server accepted them, whatever the tests' results.

${UPLOAD_OPTIONS}`;

const TEST_USAGE = `Usage: mainline test [upload options] -- <command…>

Runs the command, uploads the JUnit reports it wrote, and exits with the command's exit code, or 0
when every failed test is quarantined. Reports older than the run are left out.

${UPLOAD_OPTIONS}`;

export const DEMO_USAGE = `Usage: mainline demo [--port <n>] [--data-dir <dir>] [--exit] [--timeout <seconds>] [--forge git|gitlab]

Starts a server with a local git repository, opens five pull requests (clean, flaky, broken,
conflicting), runs them through the merge queue with a built-in CI that uploads JUnit results,
and prints what happened with curl commands to explore it. The server keeps running until Ctrl-C.

  --port <n>          port on 127.0.0.1 (default 8080; 0 picks a free one)
  --data-dir <dir>    an empty folder to keep the data in (default: a temporary folder, removed at the end)
  --exit, --once      stop once the scenario is over: exit 0 if it ended as expected, 1 if not
  --timeout <seconds> how long the scenario may take (default 90)
  --log-level <level> the server's log level (default warn): fatal, error, warn, info, debug, trace, silent
  --forge gitlab      run it on a GitLab simulator (merge requests, pipelines' job statuses, webhooks)`;

/** Each command's own help (`mainline <command> --help`, `mainline help <command>`). */
export const COMMAND_USAGE: Readonly<Record<string, string>> = {
  serve: SERVE_USAGE,
  migrate: MIGRATE_USAGE,
  token: TOKEN_USAGE,
  github: GITHUB_USAGE,
  gitlab: GITLAB_USAGE,
  upload: UPLOAD_USAGE,
  test: TEST_USAGE,
  demo: DEMO_USAGE,
  help: USAGE,
};

/**
 * True when the command line asks for the command's help: --help or -h before a `--` (what follows
 * `mainline test --` is the user's command and its own flags).
 */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
