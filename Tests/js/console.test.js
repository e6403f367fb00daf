// The web console's ES modules (Sources/SpotterWeb/files/console/), checked the way a browser links them, and the
// pure part of the admin's figures. Run: node --experimental-vm-modules --test Tests/js/console.test.js
// (the flag gives node:vm's SourceTextModule, which links modules without running them: no page is needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { histogram, parseMetrics, quantile, single } from '../../Sources/SpotterWeb/files/console/metrics.js';

const files = fileURLToPath(new URL('../../Sources/SpotterWeb/files/', import.meta.url));

/** Where the server serves each folder from (WebFiles.layout): URL path → file under Sources/SpotterWeb/files. */
function fileFor(path) {
  if (path.startsWith('/console/')) return files + 'console/' + path.slice('/console/'.length);
  if (path.startsWith('/clients/')) return files + path.slice('/clients/'.length);
  throw new Error(`${path} is not served`);
}

/** The module scripts index.html loads. */
function entryPoints() {
  const html = readFileSync(files + 'console/index.html', 'utf8');
  return [...html.matchAll(/<script\s+type="module"\s+src="([^"]+)"/g)].map((match) => match[1]);
}

/**
 * Links the graph from `entry` as a browser would (URLs resolved against the importing module's URL), with
 * `extra` sources standing in for URL paths; returns the URL paths it loaded. Rejects when a file is missing or
 * an import names something its module does not export.
 */
async function link(entry, extra = {}) {
  const modules = new Map();
  const load = (path) => {
    if (!modules.has(path)) {
      const source = extra[path] ?? readFileSync(fileFor(path), 'utf8');
      modules.set(path, new vm.SourceTextModule(source, { identifier: path }));
    }
    return modules.get(path);
  };
  const root = load(entry);
  await root.link((specifier, referencing) => load(new URL(specifier, `http://console.test${referencing.identifier}`).pathname));
  assert.equal(root.status, 'linked');
  return [...modules.keys()];
}

test('index.html loads the console as one module graph that links, and every module in the folder is part of it', async () => {
  const entries = entryPoints();
  assert.deepEqual(entries, ['/console/console.js']);
  const loaded = await link(entries[0]);
  const onDisk = readdirSync(files + 'console').filter((name) => name.endsWith('.js')).map((name) => `/console/${name}`);
  assert.deepEqual(loaded.filter((path) => path.startsWith('/console/')).sort(), onDisk.sort());
  assert.ok(loaded.includes('/clients/spotter.js'));
  assert.ok(onDisk.length > 10, `the console is split by view (${onDisk.length} modules)`);
});

test('the link check fails for a missing module and for a name a module does not export', async () => {
  await assert.rejects(link('/console/broken.js', { '/console/broken.js': "import { byId } from './no-such-module.js';" }), /ENOENT/);
  await assert.rejects(link('/console/broken.js', { '/console/broken.js': "import { noSuchName } from './dom.js';" }),
    { name: 'SyntaxError', message: /noSuchName/ });
});

const SCRAPE = `# HELP spotter_connections_open Open connections.
# TYPE spotter_connections_open gauge
spotter_connections_open 12
spotter_messages_total{kind="text"} 30
spotter_messages_total{kind="system"} 10
spotter_send_ack_seconds_bucket{le="0.001"} 50
spotter_send_ack_seconds_bucket{le="0.01"} 90
spotter_send_ack_seconds_bucket{le="+Inf"} 100
spotter_send_ack_seconds_count 100
`;

test('the figures read /metrics: gauges, counters summed over labels, and histogram buckets in order', () => {
  const metrics = parseMetrics(SCRAPE);
  assert.equal(single(metrics, 'spotter_connections_open'), 12);
  assert.equal(single(metrics, 'spotter_messages_total'), 40);
  assert.equal(single(metrics, 'spotter_absent'), null);
  assert.deepEqual(histogram(metrics, 'spotter_send_ack_seconds'),
    [{ le: 0.001, count: 50 }, { le: 0.01, count: 90 }, { le: Infinity, count: 100 }]);
  assert.deepEqual(parseMetrics('m{a="x\\"y",b="2"} 1').get('m'), [{ labels: { a: 'x\\"y', b: '2' }, value: 1 }]);
});

test('the p99 is interpolated inside its bucket, and reported as "over" when it falls in +Inf', () => {
  const buckets = histogram(parseMetrics(SCRAPE), 'spotter_send_ack_seconds');
  const median = quantile(buckets, 0.5);
  assert.equal(median.over, false);
  assert.ok(Math.abs(median.value - 0.001) < 1e-12);
  const p70 = quantile(buckets, 0.7); // 70th of 100: halfway through the 0.001..0.01 bucket's 40
  assert.ok(Math.abs(p70.value - 0.0055) < 1e-12);
  assert.deepEqual(quantile(buckets, 0.99), { value: 0.01, over: true });
  assert.equal(quantile([{ le: Infinity, count: 0 }], 0.99), null);
});
