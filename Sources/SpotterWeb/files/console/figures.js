// The admin view's live server figures: open connections, messages per second and the p99 send ack, read from
// /metrics every two seconds and drawn with a small chart of the last minute.

import { monotonicMs } from './clock.js';
import { byId, svg } from './dom.js';
import { formatNumber } from './format.js';
import { t } from './i18n.js';
import { histogram, parseMetrics, quantile, single } from './metrics.js';
import { state } from './state.js';

const METRICS_EVERY_MS = 2000;
const CHART_POINTS = 60;
let metricsTimer = null;
let samples = []; // {at, connections, rate}
let lastScrape = null; // {at, messages, buckets}
let figures = { connections: null, rate: null, p99: null, p99Over: false };
let chartParts = null;

/** Starts reading /metrics, from an empty chart. */
export function startFigures() {
  samples = [];
  lastScrape = null;
  figures = { connections: null, rate: null, p99: null, p99Over: false };
  buildChart();
  pollMetrics();
  metricsTimer = setInterval(pollMetrics, METRICS_EVERY_MS);
}

export function stopFigures() {
  clearInterval(metricsTimer);
  metricsTimer = null;
}

async function pollMetrics() {
  let text;
  try {
    // With --metrics-token the server wants a bearer; the admin's access token is one it takes.
    const token = state.session?.access_token;
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const response = await fetch('/metrics', { cache: 'no-store', headers });
    if (!response.ok) throw new Error(String(response.status));
    text = await response.text();
  } catch {
    figures = { connections: null, rate: null, p99: null, p99Over: false };
    renderFigures();
    return;
  }
  if (!metricsTimer) return;
  const at = monotonicMs();
  const metrics = parseMetrics(text);
  const connections = single(metrics, 'spotter_connections_open');
  const sent = single(metrics, 'spotter_messages_total');
  const buckets = histogram(metrics, 'spotter_send_ack_seconds');

  let rate = null;
  if (sent !== null && lastScrape?.messages !== null && lastScrape?.messages !== undefined) {
    const seconds = (at - lastScrape.at) / 1000;
    const delta = sent - lastScrape.messages;
    if (seconds > 0 && delta >= 0) rate = delta / seconds; // a negative delta: the server restarted
  }
  // p99 over the last interval when something was sent in it, else over everything since the server started.
  let p99 = null;
  if (buckets) {
    let window = buckets;
    if (lastScrape?.buckets && lastScrape.buckets.length === buckets.length) {
      const delta = buckets.map((b, i) => ({ le: b.le, count: b.count - lastScrape.buckets[i].count }));
      if (delta[delta.length - 1].count > 0 && delta.every((b) => b.count >= 0)) window = delta;
    }
    p99 = quantile(window, 0.99);
  }
  lastScrape = { at, messages: sent, buckets };
  figures = { connections, rate, p99: p99 ? p99.value * 1000 : null, p99Over: Boolean(p99?.over) };
  samples.push({ connections: connections ?? 0, rate: rate ?? 0 });
  if (samples.length > CHART_POINTS) samples = samples.slice(-CHART_POINTS);
  renderFigures();
}

export function renderFigures() {
  const dash = '–';
  const connections = byId('figure-connections');
  connections.textContent = figures.connections === null ? dash : formatNumber(figures.connections);
  connections.dataset.value = figures.connections === null ? '' : String(figures.connections);
  const rate = byId('figure-rate');
  rate.textContent = figures.rate === null ? dash : formatNumber(figures.rate, 1);
  rate.dataset.value = figures.rate === null ? '' : String(figures.rate);
  const p99 = byId('figure-p99');
  if (figures.p99 === null) p99.textContent = dash;
  else p99.textContent = t(figures.p99Over ? 'over' : 'ms', { n: formatNumber(figures.p99, figures.p99 < 10 ? 2 : 0) });
  p99.dataset.value = figures.p99 === null ? '' : String(figures.p99);
  drawChart();
}

const CHART_W = 600;
const CHART_H = 160;
const CHART_PAD = 6;

function buildChart() {
  const host = byId('chart');
  const root = svg('svg', { viewBox: `0 0 ${CHART_W} ${CHART_H}`, class: 'chart-svg', role: 'img', preserveAspectRatio: 'none' });
  const title = svg('title');
  root.append(title);
  for (let i = 1; i < 4; i += 1) {
    const y = CHART_PAD + ((CHART_H - 2 * CHART_PAD) * i) / 4;
    root.append(svg('line', { x1: 0, x2: CHART_W, y1: y, y2: y, class: 'chart-grid' }));
  }
  const conns = svg('polyline', { class: 'chart-line chart-conns', points: '' });
  const rate = svg('polyline', { class: 'chart-line chart-rate', points: '' });
  root.append(conns, rate);
  host.replaceChildren(root);
  chartParts = { root, title, conns, rate };
}

function points(values) {
  const max = Math.max(1, ...values);
  const step = (CHART_W - 2 * CHART_PAD) / (CHART_POINTS - 1);
  const offset = CHART_POINTS - values.length;
  return values.map((value, i) => {
    const x = CHART_PAD + (offset + i) * step;
    const y = CHART_H - CHART_PAD - (value / max) * (CHART_H - 2 * CHART_PAD);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  }).join(' ');
}

function drawChart() {
  if (!chartParts) return;
  const label = t('chartLabel', { n: samples.length });
  chartParts.title.textContent = label;
  chartParts.root.setAttribute('aria-label', label);
  chartParts.conns.setAttribute('points', points(samples.map((s) => s.connections)));
  chartParts.rate.setAttribute('points', points(samples.map((s) => s.rate)));
}
