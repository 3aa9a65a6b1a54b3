// A scratch copy of a seeded database: the read, contention and soak parts write (list snapshots, a
// merge queue, big and small uploads), and the cached seed must stay as seeded for the next run.
// SQLite: a copy of the database file next to the cache. PostgreSQL: a database created from
// `mainline_bench` as its template (same schemas, so the seed's search_path still applies).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { log, type Params, sleep } from './common.ts';
import type { Seeded } from './seed.ts';
import type { DatabaseLocation } from './server.ts';

const SCRATCH_DB = 'mainline_bench_scratch';

export interface Scratch {
  readonly location: DatabaseLocation;
  /** Seconds the copy took. */
  readonly copySeconds: number;
  drop(): Promise<void>;
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function scratchSqlite(seeded: Seeded & { location: { dataDir: string } }, params: Params): Scratch {
  for (const entry of fs.readdirSync(params.cacheDir)) {
    if (entry.startsWith('scratch-sqlite-'))
      fs.rmSync(path.join(params.cacheDir, entry), { recursive: true, force: true });
  }
  const t0 = performance.now();
  const dataDir = fs.mkdtempSync(path.join(params.cacheDir, 'scratch-sqlite-'));
  for (const file of ['mainline.db', 'mainline.db-wal']) {
    const from = path.join(seeded.location.dataDir, file);
    if (fs.existsSync(from)) fs.copyFileSync(from, path.join(dataDir, file), fs.constants.COPYFILE_FICLONE);
  }
  return {
    location: { dataDir },
    copySeconds: (performance.now() - t0) / 1000,
    drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
}

async function scratchPostgres(
  seeded: Seeded & { location: { databaseUrl: string } },
  params: Params,
): Promise<Scratch> {
  const t0 = performance.now();
  const adminUrl = params.pgAdminUrl;
  await admin(adminUrl, async (client) => {
    const version = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
    const strategy = Number(version.rows[0]?.v ?? 0) >= 150000 ? ' strategy = file_copy' : '';
    await client.query(`drop database if exists ${SCRATCH_DB} with (force)`);
    // The template must have no other session; a closing pool or autovacuum can hold one briefly.
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`create database ${SCRATCH_DB} template mainline_bench${strategy}`);
        return;
      } catch (error) {
        if (attempt >= 10 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await sleep(1000);
      }
    }
  });
  const url = new URL(seeded.location.databaseUrl);
  url.pathname = `/${SCRATCH_DB}`;
  return {
    location: { databaseUrl: url.toString() },
    copySeconds: (performance.now() - t0) / 1000,
    drop: () =>
      admin(adminUrl, async (client) => {
        await client.query(`drop database if exists ${SCRATCH_DB} with (force)`);
      }),
  };
}

/** A writable copy of the seeded database; drop() removes it. */
export async function scratchCopy(seeded: Seeded, params: Params): Promise<Scratch> {
  const scratch =
    'dataDir' in seeded.location
      ? scratchSqlite(seeded as Seeded & { location: { dataDir: string } }, params)
      : await scratchPostgres(seeded as Seeded & { location: { databaseUrl: string } }, params);
  log(`scratch ${seeded.engine}: copied the seeded database in ${scratch.copySeconds.toFixed(1)} s`);
  return scratch;
}
