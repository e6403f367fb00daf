// Starts and stops a real Spotter process for the JavaScript client's tests, and makes accounts over HTTP.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const BIN = process.env.SPOTTER_BIN ?? path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../../../.build/debug/spotter');

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class SpotterProcess {
  constructor({ args = [] } = {}) {
    if (!fs.existsSync(BIN)) throw new Error(`no spotter binary at ${BIN} (set SPOTTER_BIN or run swift build)`);
    this.args = args;
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spotter-js-'));
    this.log = [];
  }

  get url() { return `http://127.0.0.1:${this.port}`; }

  /** Starts the server (on the same port and data as before, after a stop or a kill) and waits for /healthz. */
  async start() {
    this.port ??= await freePort();
    this.child = spawn(BIN, ['serve', '--host', '127.0.0.1', '--port', String(this.port), '--data-dir', this.dataDir,
      '--log-level', 'warning', ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout, this.child.stderr]) stream.on('data', (chunk) => this.log.push(String(chunk)));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 15000;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.url}/healthz`);
        if (response.ok) return this;
      } catch { /* not yet */ }
      await sleep(50);
    }
    throw new Error(`spotter did not start:\n${this.log.join('')}`);
  }

  /** kill -9: no goodbye to anyone. */
  async kill() {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM: the graceful shutdown. */
  async stop() {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timeout = new Promise((resolve) => setTimeout(resolve, 20000, 'timeout').unref());
    if (await Promise.race([this.exited, timeout]) === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  async cleanup() {
    await this.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  async call(method, urlPath, body, token) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(`${this.url}${urlPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  }

  async signUp(role, name, email, password = 'secret1') {
    const { status, json } = await this.call('POST', '/v1/auth/signup',
      { role, full_name: name, email, password, password_confirmation: password });
    if (status !== 201) throw new Error(`sign-up ${status}: ${JSON.stringify(json)}`);
    return { access: json.access_token, refresh: json.refresh_token, id: json.user.id };
  }

  /** A coach and a client linked by a thread. */
  async pair(tag = 'a') {
    const coach = await this.signUp('coach', `Coach ${tag}`, `coach-${tag}@example.com`);
    const client = await this.signUp('client', `Client ${tag}`, `client-${tag}@example.com`);
    const onboarding = {
      date_of_birth: '1995-06-15', gender: 'female', height_cm: 165, weight_kg: 70.5, goal: 'Lose 10kg',
      experience_level: 'beginner', dietary_restrictions: [], medical_conditions: [],
    };
    const onboarded = await this.call('PUT', '/v1/me/onboarding', onboarding, client.access);
    if (onboarded.status !== 200) throw new Error(`onboarding ${onboarded.status}: ${JSON.stringify(onboarded.json)}`);
    const linked = await this.call('POST', '/v1/me/coach', { coach_id: coach.id }, client.access);
    if (linked.status !== 201) throw new Error(`link ${linked.status}: ${JSON.stringify(linked.json)}`);
    return { coach, client, thread: linked.json.thread_id };
  }
}

/** Waits until `check()` is true (polling), or fails with `what`. */
export async function until(check, what, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export { sleep };
