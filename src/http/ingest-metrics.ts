import { Counter, type Registry } from 'prom-client';
import type { ParserPool } from '../app/ingest/parsing/pool.ts';

/** Ingest metrics beside the gate's (plugins/metrics.ts): the parsing work done. */
export function registerIngestMetrics(registry: Registry, parsers: ParserPool): void {
  new Counter({
    name: 'mainline_ingest_parsed_bytes_total',
    help: 'Bytes of uploaded JUnit files handed to the parser, after decompression (a rejected file stops being inflated)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(parsers.plainBytes);
    },
  });
}
