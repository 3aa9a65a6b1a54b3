import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestTally } from '../../src/http/plugins/metrics.ts';

// The tally replaces prom-client's Counter and Histogram on the request path: what a scrape reads must
// be what those two would have rendered from the same requests, byte for byte.
function reference(registry: Registry) {
  const requests = new Counter({
    name: 'mainline_http_requests_total',
    help: 'HTTP requests answered, by route template and status code',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mainline_http_request_duration_seconds',
    help: 'Time from receiving a request to sending the response, by route template',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (method: string, route: string, status: number, seconds: number) => {
    const labels = { method, route };
    requests.inc({ ...labels, status_code: String(status) });
    duration.observe(labels, seconds);
  };
}

describe('RequestTally', () => {
  it('renders /metrics exactly as prom-client Counter and Histogram do for the same requests', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const tally = new RequestTally(ours);
    const record = reference(theirs);
    const routes = ['/v1/flaky-tests/get-test-details', '/v1/status', 'unmatched', '/a "quoted"\\route\n'];
    const methods = ['POST', 'GET', 'HEAD'];
    const statuses = [200, 404, 401, 500, 429];
    // Exact bucket bounds, values between and beyond them, zero and tiny values.
    const durations = [0, 1e-7, 0.001, 0.0010001, 0.0025, 0.004, 0.1, 0.25, 1, 2.5, 9.99, 10, 10.5, 1234.5];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (let i = 0; i < 5000; i++) {
      const args = [
        methods[next(methods.length)] as string,
        routes[next(routes.length)] as string,
        statuses[next(statuses.length)] as number,
        next(3) === 0 ? (durations[next(durations.length)] as number) : next(100000) / 3e6,
      ] as const;
      tally.record(...args);
      record(...args);
      if (i % 1000 === 0) expect(await ours.metrics()).toBe(await theirs.metrics());
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    ours.resetMetrics();
    theirs.resetMetrics();
    tally.record('GET', '/v1/status', 200, 0.003);
    record('GET', '/v1/status', 200, 0.003);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
