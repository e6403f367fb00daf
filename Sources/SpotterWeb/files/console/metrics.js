// Reading the server's /metrics (Prometheus text) for the admin's live figures. Pure functions, no page: the
// figures module fetches and draws, Tests/js checks these.

/** Prometheus text → Map(name → [{labels, value}]). */
export function parseMetrics(text) {
  const metrics = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]] = label[2];
    const value = match[3] === '+Inf' ? Infinity : Number(match[3]);
    if (!metrics.has(match[1])) metrics.set(match[1], []);
    metrics.get(match[1]).push({ labels, value });
  }
  return metrics;
}

export function single(metrics, name) {
  const samplesOf = metrics.get(name);
  if (!samplesOf?.length) return null;
  return samplesOf.reduce((sum, s) => sum + (Number.isFinite(s.value) ? s.value : 0), 0);
}

/** Cumulative histogram buckets as [{le, count}], sorted by le (absent: null). */
export function histogram(metrics, name) {
  const rows = metrics.get(`${name}_bucket`);
  if (!rows?.length) return null;
  return rows
    .map((row) => ({ le: row.labels.le === '+Inf' ? Infinity : Number(row.labels.le), count: row.value }))
    .filter((row) => !Number.isNaN(row.le))
    .sort((a, b) => a.le - b.le);
}

/** The q-quantile (seconds) estimated from cumulative buckets, interpolating inside the bucket; {value, over}. */
export function quantile(buckets, q) {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  for (let i = 0; i < buckets.length; i += 1) {
    if (buckets[i].count >= rank) {
      const lower = i > 0 ? buckets[i - 1].le : 0;
      const upper = buckets[i].le;
      if (!Number.isFinite(upper)) return { value: lower, over: true };
      const below = i > 0 ? buckets[i - 1].count : 0;
      const inBucket = buckets[i].count - below;
      const fraction = inBucket > 0 ? (rank - below) / inBucket : 1;
      return { value: lower + (upper - lower) * fraction, over: false };
    }
  }
  return null;
}
