import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_test_health.ts';
import * as m0003 from './0003_merge_queue.ts';
import * as m0004 from './0004_flake_protection.ts';
import * as m0005 from './0005_queue_archive.ts';
import * as m0006 from './0006_outgoing_webhooks.ts';
import * as m0007 from './0007_github.ts';
import * as m0008 from './0008_ingest_indexes.ts';
import * as m0009 from './0009_dashboard.ts';
import * as m0010 from './0010_test_passes.ts';
import * as m0011 from './0011_test_ordinals.ts';
import * as m0012 from './0012_upload_passes.ts';
import * as m0013 from './0013_failure_texts.ts';
import * as m0014 from './0014_results_without_test_fk.ts';
import * as m0015 from './0015_failure_text_use.ts';
import * as m0016 from './0016_forge_grants.ts';
import * as m0017 from './0017_queue_labels.ts';
import * as m0018 from './0018_test_rollups.ts';
import * as m0019 from './0019_default_broken_monitor.ts';
import * as m0020 from './0020_test_cases_by_name.ts';
import * as m0021 from './0021_run_hours_by_test.ts';
import * as m0022 from './0022_queue_rows.ts';
import * as m0023 from './0023_ingest_costs.ts';
import * as m0027 from './0027_queue_chart_hours.ts';
import * as m0028 from './0028_duration_means.ts';
import * as m0030 from './0030_duration_means_pending.ts';
import * as m0031 from './0031_queue_action_waits.ts';
import * as m0032 from './0032_test_owners.ts';
import * as m0033 from './0033_failing_windows.ts';
import * as m0034 from './0034_queue_run_heads.ts';
import * as m0035 from './0035_run_hours_pending.ts';
import * as m0036 from './0036_queue_compact_rows.ts';
import * as m0037 from './0037_unhealthy_index_partial.ts';

/**
 * Every migration, in order. Names sort lexically and are recorded in `kysely_migration`;
 * never rename or edit one that has shipped, add a new one.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001_foundation': m0001,
  '0002_test_health': m0002,
  '0003_merge_queue': m0003,
  '0004_flake_protection': m0004,
  '0005_queue_archive': m0005,
  '0006_outgoing_webhooks': m0006,
  '0007_github': m0007,
  '0008_ingest_indexes': m0008,
  '0009_dashboard': m0009,
  '0010_test_passes': m0010,
  '0011_test_ordinals': m0011,
  '0012_upload_passes': m0012,
  '0013_failure_texts': m0013,
  '0014_results_without_test_fk': m0014,
  '0015_failure_text_use': m0015,
  '0016_forge_grants': m0016,
  '0017_queue_labels': m0017,
  '0018_test_rollups': m0018,
  '0019_default_broken_monitor': m0019,
  '0020_test_cases_by_name': m0020,
  '0021_run_hours_by_test': m0021,
  '0022_queue_rows': m0022,
  '0023_ingest_costs': m0023,
  '0027_queue_chart_hours': m0027,
  '0028_duration_means': m0028,
  '0030_duration_means_pending': m0030,
  '0031_queue_action_waits': m0031,
  '0032_test_owners': m0032,
  '0033_failing_windows': m0033,
  '0034_queue_run_heads': m0034,
  '0035_run_hours_pending': m0035,
  '0036_queue_compact_rows': m0036,
  '0037_unhealthy_index_partial': m0037,
};
