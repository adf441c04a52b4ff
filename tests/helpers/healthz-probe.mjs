// Measures /healthz from a process of its own (so the test's own work does not count): one request
// at a time, each on a new connection from `localAddress`, every 20 ms for `ms`; prints one JSON line
// {n, failed, p50, p99, max} (latencies in ms; a request refused, reset or unanswered within 5 s fails).
//   node healthz-probe.mjs URL MS [LOCAL_ADDRESS]
import http from 'node:http';

const [url, ms, localAddress = '127.0.0.1'] = process.argv.slice(2);
const latencies = [];
let failed = 0;
const end = Date.now() + Number(ms);
while (Date.now() < end) {
  const started = performance.now();
  const ok = await new Promise((resolve) => {
    const req = http.get(`${url}/healthz`, { agent: false, localAddress, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
  if (ok) latencies.push(performance.now() - started);
  else failed++;
  await new Promise((r) => setTimeout(r, 20));
}
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * q) - 1)] ?? null;
process.stdout.write(
  `${JSON.stringify({ n: latencies.length, failed, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? null })}\n`,
);
