// A WebSocket for Node with the browser's API (onopen, onmessage, onerror, onclose, send, close, readyState), for
// running spotter.js in Node 18–21, which have no WebSocket of their own (Node 22 has one: use that, or this):
//
//   import { NodeWebSocket } from './node-websocket.js';
//   new SpotterClient({ url, accessToken, refreshToken, WebSocket: NodeWebSocket });
//
// ws:// and wss:// (TLS with the system's CAs and the host's name checked); text and binary messages,
// fragmentation, ping/pong and close. Like a browser, a connect that fails (refused, reset, a refused upgrade)
// fires `error` and then `close` with 1006, once. No dependencies.
import net from 'node:net';
import tls from 'node:tls';
import crypto from 'node:crypto';

export class NodeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;

  /** Headers every new socket sends (the tests set Accept-Language through it). */
  static extraHeaders = {};

  constructor(url, protocols = []) {
    const parsed = new URL(url);
    this.url = url;
    this.readyState = NodeWebSocket.CONNECTING;
    this.protocol = '';
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    this.buffer = Buffer.alloc(0);
    this.fragments = [];
    this.closeSent = false;
    this.closed = false;
    this.key = crypto.randomBytes(16).toString('base64');
    const secure = parsed.protocol === 'wss:' || parsed.protocol === 'https:';
    const port = Number(parsed.port || (secure ? 443 : 80));
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = secure ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect(port, host);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on(secure ? 'secureConnect' : 'connect', () => {
      const head = [
        `GET ${parsed.pathname}${parsed.search} HTTP/1.1`, `Host: ${parsed.host}`, 'Upgrade: websocket', 'Connection: Upgrade',
        'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${this.key}`,
      ];
      const offered = [].concat(protocols ?? []);
      if (offered.length) head.push(`Sec-WebSocket-Protocol: ${offered.join(', ')}`);
      for (const [name, value] of Object.entries(NodeWebSocket.extraHeaders)) head.push(`${name}: ${value}`);
      socket.write(head.join('\r\n') + '\r\n\r\n');
    });
    socket.on('data', (chunk) => this.data(chunk));
    socket.on('error', () => {
      if (this.readyState !== NodeWebSocket.CLOSED && this.readyState !== NodeWebSocket.CLOSING) this.onerror?.({ type: 'error' });
      this.finish(1006, '');
    });
    socket.on('close', () => this.finish(1006, ''));
  }

  data(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.readyState === NodeWebSocket.CONNECTING) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      this.buffer = this.buffer.subarray(end + 4);
      const status = Number(head[0].split(' ')[1]);
      const headers = Object.fromEntries(head.slice(1).map((line) => {
        const at = line.indexOf(':');
        return [line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim()];
      }));
      const accept = crypto.createHash('sha1').update(this.key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
      if (status !== 101 || headers['sec-websocket-accept'] !== accept) {
        // As in a browser: a refused upgrade is an error, then a close with 1006 and nothing more.
        this.handshakeStatus = status;
        this.onerror?.({ type: 'error' });
        this.socket.destroy();
        return this.finish(1006, '');
      }
      this.protocol = headers['sec-websocket-protocol'] ?? '';
      this.readyState = NodeWebSocket.OPEN;
      this.onopen?.({ type: 'open' });
    }
    this.frames();
  }

  frames() {
    while (this.readyState !== NodeWebSocket.CLOSED && this.buffer.length >= 2) {
      const first = this.buffer[0], second = this.buffer[1];
      let length = second & 0x7f, offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffer.length < offset + length) return;
      const payload = this.buffer.subarray(offset, offset + length);
      this.buffer = this.buffer.subarray(offset + length);
      const opcode = first & 0x0f, fin = (first & 0x80) !== 0;
      if (opcode === 0x9) this.write(0xa, payload);
      else if (opcode === 0x8) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.length > 2 ? payload.subarray(2).toString('utf8') : '';
        if (!this.closeSent) this.write(0x8, payload.subarray(0, 2));
        this.closeSent = true;
        this.socket.end();
        return this.finish(code, reason);
      } else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        this.fragments.push(Buffer.from(payload));
        if (opcode !== 0x0) this.opcode = opcode;
        if (fin) {
          const whole = Buffer.concat(this.fragments);
          this.fragments = [];
          this.onmessage?.({ type: 'message', data: this.opcode === 0x1 ? whole.toString('utf8') : whole });
        }
      }
    }
  }

  write(opcode, payload) {
    const mask = crypto.randomBytes(4);
    const length = payload.length;
    const head = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length])
      : length < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(length)); return b; })()]);
    const masked = Buffer.from(payload);
    for (let i = 0; i < masked.length; i++) masked[i] ^= mask[i % 4];
    this.socket.write(Buffer.concat([head, mask, masked]));
  }

  send(text) {
    if (this.readyState !== NodeWebSocket.OPEN) throw new Error('WebSocket is not open');
    this.write(0x1, Buffer.from(String(text), 'utf8'));
  }

  close(code = 1000, reason = '') {
    if (this.readyState === NodeWebSocket.CLOSED) return;
    if (this.readyState === NodeWebSocket.OPEN && !this.closeSent) {
      const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
      payload.writeUInt16BE(code, 0);
      payload.write(reason, 2);
      this.write(0x8, payload);
      this.closeSent = true;
      this.readyState = NodeWebSocket.CLOSING;
      setTimeout(() => this.socket.destroy(), 1000).unref();
    } else {
      this.socket.destroy();
    }
  }

  finish(code, reason) {
    if (this.closed) return;
    this.closed = true;
    this.readyState = NodeWebSocket.CLOSED;
    this.onclose?.({ type: 'close', code, reason, wasClean: code !== 1006 });
  }
}
