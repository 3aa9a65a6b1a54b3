// The one-at-a-time loop of the read tables (bench/sequential.ts), in a process of its own: a fresh
// Node with nothing else on its heap, so its own collections do not land in the latencies it
// measures. In the bench process, after seeding and building the merge queue, the loop's own
// garbage collection added up to ~15% of its time and most of the page-1 p99. Plain JavaScript (no
// compile step). Reads one JSON job from stdin, writes one JSON answer to stdout:
//   in:  { requests: [{ url, method, headers, body? }], n, warmup, budgetMs }  (requests used in turn)
//   out: { times: [ms, ...], failed }
import http from 'node:http';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { requests, n, warmup, budgetMs } = JSON.parse(input);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(r) {
  return new Promise((resolve, reject) => {
    const headers =
      r.body === undefined
        ? r.headers
        : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = http.request(r.url, { method: r.method, agent, headers }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

// Warm-up: `warmup` requests, or a fifth of the budget. Then n requests, or fewer (at least 20)
// once the budget is spent: a slow endpoint stops early with fewer samples.
const times = [];
let failed = 0;
const started = performance.now();
let measuredFrom = Number.POSITIVE_INFINITY;
for (let i = 0; times.length < n; i++) {
  const warming = i < warmup && performance.now() - started < budgetMs / 5;
  if (!warming && measuredFrom === Number.POSITIVE_INFINITY) measuredFrom = performance.now();
  if (!warming && times.length >= Math.min(n, 20) && performance.now() - measuredFrom > budgetMs) break;
  const t0 = performance.now();
  const status = await send(requests[i % requests.length]);
  const elapsed = performance.now() - t0;
  if (status < 200 || status > 299) failed++;
  if (!warming) times.push(elapsed);
}
agent.destroy();
process.stdout.write(JSON.stringify({ times, failed }));
