/**
 * The program behind the `etcd` stand-in of an envtest assets directory. envtest always starts an
 * `etcd` binary and waits for `GET /health` on its `--listen-client-urls` to answer
 * `{"health":"true"}`; Capstan keeps its data in its embedded store, so this stand-in only answers
 * that probe (and `--help`, which envtest runs to discover flags). It exits on SIGTERM/SIGINT, and
 * when its parent dies (a test binary killed before its Stop: the stand-in is then re-parented,
 * and nothing would ever stop it). It is written out as plain JavaScript (no imports from
 * Capstan) so that it starts in a few tens of milliseconds.
 */
/** What `etcd --help` of the stand-in prints (envtest looks for `--unsafe-no-fsync` in it). */
export const ETCD_STANDIN_HELP =
  'Usage: etcd [flags] (Capstan envtest stand-in: answers GET /health only)\n' +
  '  --listen-client-urls\n  --advertise-client-urls\n  --listen-peer-urls\n  --data-dir\n  --unsafe-no-fsync';

export const ETCD_STANDIN_JS = `// Written by \`capstan envtest-assets\`: a stand-in for etcd that only answers envtest's health probe.
import { createServer } from 'node:http';

const args = process.argv.slice(2);
// envtest probes flags with \`etcd --help\` (e.g. for --unsafe-no-fsync): answer and exit.
if (args.includes('--help') || args.includes('-h')) {
  console.log(${JSON.stringify(ETCD_STANDIN_HELP)});
  process.exit(0);
}
if (args.includes('--version')) {
  console.log('etcd Version: 3.5.21 (Capstan envtest stand-in)');
  process.exit(0);
}
const urls = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  let value;
  if (arg.startsWith('--listen-client-urls=')) value = arg.slice('--listen-client-urls='.length);
  else if (arg === '--listen-client-urls') value = args[++i];
  if (value !== undefined) urls.push(...value.split(',').filter((u) => u !== ''));
}
if (urls.length === 0) urls.push('http://127.0.0.1:2379');

const servers = urls.map((raw) => {
  const url = new URL(raw);
  const server = createServer((req, res) => {
    if (req.url === '/health' || req.url === '/readyz' || req.url === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/health' ? '{"health":"true","reason":""}' : 'ok');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found\\n');
  });
  server.on('error', (err) => {
    console.error('etcd stand-in: ' + raw + ': ' + err.message);
    process.exit(1);
  });
  server.listen(Number(url.port || 2379), url.hostname.replace(/^\\[|\\]$/g, ''));
  return server;
});

const stop = () => {
  for (const server of servers) server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Orphaned (the process that started us is gone): nobody will send the SIGTERM.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();
`;
