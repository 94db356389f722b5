/**
 * The program behind the `etcd` stand-in of an envtest assets directory. envtest always starts an
 * `etcd` binary and waits for `GET /health` on its `--listen-client-urls` to answer
 * `{"health":"true"}`; Capstan keeps its data in memory, so this stand-in answers that probe (and
 * `--help`, which envtest runs to discover flags). It exits on SIGTERM/SIGINT, and when its parent
 * dies (a test binary killed before its Stop: the stand-in is then re-parented, and nothing would
 * ever stop it). It is written out as plain JavaScript (no imports from Capstan) so that it
 * listens a few tens of milliseconds after its start.
 *
 * It also parks a server for the kube-apiserver shim (`--capstan-parked-server=MAIN`, written by
 * the `etcd` script): envtest starts etcd, waits for it, then starts kube-apiserver, so a Capstan
 * process started beside the stand-in has loaded the server's code by the time the shim asks for
 * it. The shim POSTs its args to {@link PARKED_PATH}; the answer is `pid N`, then the server's
 * output lines tagged `1 ` (stdout) or `2 ` (stderr), then `exit CODE` when it has exited. The
 * shim stops it with a signal to that pid; when the shim's connection closes first (the shim was
 * killed), the stand-in stops it. A second kube-apiserver start (envtest restarting it) finds no
 * parked server (409) and starts cold, as it would without the stand-in.
 */
/** What `etcd --help` of the stand-in prints (envtest looks for `--unsafe-no-fsync` in it). */
export const ETCD_STANDIN_HELP =
  'Usage: etcd [flags] (Capstan envtest stand-in: answers GET /health only)\n' +
  '  --listen-client-urls\n  --advertise-client-urls\n  --listen-peer-urls\n  --data-dir\n  --unsafe-no-fsync';

/** The stand-in's own flag naming Capstan's CLI entry, whose server it parks. */
export const PARKED_FLAG = '--capstan-parked-server';

/** The hidden `capstan` command of the parked server (src/envtest/parked-server.ts). */
export const PARKED_COMMAND = 'envtest-parked-server';

/** Where the kube-apiserver shim asks the stand-in for its parked server. */
export const PARKED_PATH = '/capstan-envtest/apiserver';

export const ETCD_STANDIN_JS = `// Written by \`capstan envtest-assets\`: a stand-in for etcd that answers envtest's health probe and
// keeps a Capstan server process parked for the kube-apiserver shim.
import { spawn } from 'node:child_process';
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
let serverMain;
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  let value;
  if (arg.startsWith('${PARKED_FLAG}=')) serverMain = arg.slice('${PARKED_FLAG}='.length);
  else if (arg.startsWith('--listen-client-urls=')) value = arg.slice('--listen-client-urls='.length);
  else if (arg === '--listen-client-urls') value = args[++i];
  if (value !== undefined) urls.push(...value.split(',').filter((u) => u !== ''));
}
if (urls.length === 0) urls.push('http://127.0.0.1:2379');

// The parked server: \`capstan ${PARKED_COMMAND}\` loads the server's code at once, while envtest
// is still waiting for this stand-in, then waits on its stdin for the kube-apiserver shim's args.
// Its output is kept until the shim takes it, then relayed to the shim line by line.
function park(main) {
  const child = spawn(process.execPath, [main, '${PARKED_COMMAND}'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const p = { child, taken: false, exitCode: undefined, held: [], sink: undefined };
  const relay = (stream, tag) =>
    new Promise((resolve) => {
      let rest = '';
      const emit = (line) => (p.sink !== undefined ? p.sink(tag + ' ' + line + '\\n') : p.held.push(tag + ' ' + line + '\\n'));
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (rest + chunk).split('\\n');
        rest = lines.pop();
        for (const line of lines) emit(line);
      });
      stream.on('end', () => {
        if (rest !== '') emit(rest);
        resolve();
      });
    });
  const output = Promise.all([relay(child.stdout, '1'), relay(child.stderr, '2')]);
  p.exited = new Promise((resolve) => {
    child.on('error', (err) => {
      p.held.push('2 etcd stand-in: cannot start the parked server: ' + err.message + '\\n');
      p.exitCode = 1;
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      p.exitCode = code ?? (signal === 'SIGTERM' ? 143 : signal === 'SIGINT' ? 130 : 137);
      output.then(() => resolve(p.exitCode));
    });
  });
  child.stdin.on('error', () => undefined);
  return p;
}
/** The one parked server (there is no second: a restarted kube-apiserver starts cold). */
const hosted = serverMain === undefined ? undefined : park(serverMain);
let parked = hosted;

/** The shim's request: its args, one per line. The answer streams the server's output until it exits. */
function hostApiserver(req, res) {
  const p = parked;
  if (p === undefined || p.taken || p.exitCode !== undefined) {
    res.writeHead(409, { 'content-type': 'text/plain' });
    res.end('no parked server\\n');
    return;
  }
  p.taken = true;
  parked = undefined;
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const argv = body.split('\\n');
    if (argv.at(-1) === '') argv.pop();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('pid ' + p.child.pid + '\\n');
    for (const line of p.held.splice(0)) res.write(line);
    p.sink = (line) => res.write(line);
    p.child.stdin.end(JSON.stringify(argv) + '\\n');
    p.exited.then((code) => res.end('exit ' + code + '\\n'));
  });
  // The shim is gone (killed): nobody will stop its server.
  res.on('close', () => {
    if (p.exitCode === undefined) p.child.kill('SIGTERM');
  });
}

const servers = urls.map((raw) => {
  const url = new URL(raw);
  const server = createServer((req, res) => {
    if (req.url === '/health' || req.url === '/readyz' || req.url === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/health' ? '{"health":"true","reason":""}' : 'ok');
      return;
    }
    if (req.method === 'POST' && req.url === '${PARKED_PATH}') {
      hostApiserver(req, res);
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
  const p = hosted;
  if (p === undefined || p.exitCode !== undefined) process.exit(0);
  // A server still running (the shim was never stopped) or still parked: stop it first.
  p.child.kill('SIGTERM');
  setTimeout(() => {
    p.child.kill('SIGKILL');
    process.exit(0);
  }, 10_000).unref();
  p.exited.then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Orphaned (the process that started us is gone): nobody will send the SIGTERM.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();
`;
