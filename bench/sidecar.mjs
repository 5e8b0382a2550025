// Drives `takeback serve` (JSON-RPC with LSP framing over stdio) for the benchmarks: how long a
// command capture takes in a running sidecar, and the sidecar's peak memory (VmHWM).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export class Sidecar {
  constructor(bin, cwd, env) {
    this.child = spawn(process.execPath, [bin, 'serve', '--stdio'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.buf = Buffer.alloc(0);
    this.next = 1;
    this.waiting = new Map();
    this.child.stdout.on('data', (d) => this.onData(d));
    this.child.stderr.on('data', () => {});
    this.cwd = cwd;
  }

  onData(d) {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/Content-Length: (\d+)/i.exec(this.buf.toString('latin1', 0, end))?.[1]);
      if (this.buf.length < end + 4 + len) return;
      const msg = JSON.parse(this.buf.toString('utf8', end + 4, end + 4 + len));
      this.buf = this.buf.subarray(end + 4 + len);
      if (msg.id !== undefined && this.waiting.has(msg.id) && (msg.result !== undefined || msg.error !== undefined)) {
        const { resolve, reject } = this.waiting.get(msg.id);
        this.waiting.delete(msg.id);
        if (msg.error) reject(new Error(`${msg.error.code}: ${msg.error.message}`));
        else resolve(msg.result);
      } else if (msg.id !== undefined && msg.method) {
        this.send({ jsonrpc: '2.0', id: msg.id, result: null }); // a request from the server: answer it
      }
    }
  }

  send(msg) {
    const body = Buffer.from(JSON.stringify(msg));
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  request(method, params) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  async start() {
    await this.request('initialize', { processId: process.pid, rootUri: pathToFileURL(this.cwd).href, capabilities: {} });
    this.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  }

  /** Peak resident memory of the sidecar so far (bytes), from /proc. */
  peakRss() {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  }

  async stop() {
    try {
      await Promise.race([this.request('shutdown', null), new Promise((r) => setTimeout(r, 2000))]);
      this.send({ jsonrpc: '2.0', method: 'exit' });
    } catch {
      // gone already
    }
    setTimeout(() => this.child.kill('SIGKILL'), 2000).unref();
    await new Promise((r) => (this.child.exitCode !== null ? r() : this.child.once('exit', r)));
  }
}
