// The power-cut model of the crash-consistency test: a process runs with the preloaded recorder
// (powercut/trace.c), then its log is replayed up to a point to build what the disk would hold
// had the power gone then. The model is the strictest POSIX allows: a file's bytes and mode are
// on disk as of its last fsync/fdatasync; a folder's entries (creations, renames, unlinks in it)
// as of that folder's last fsync; sync/syncfs make everything durable. Whatever was on disk
// before the process started counts as durable.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The preloaded recorder, compiled once per test run into `dir` with the system's C compiler. */
export function buildRecorder(dir: string): string {
  const src = path.join(import.meta.dirname, 'powercut', 'trace.c');
  const out = path.join(dir, 'powercut-trace.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O1', '-o', out, src, '-ldl', '-lpthread']);
  return out;
}

/** The environment that records a process's file calls under `root` into `log`. */
export function recorderEnv(so: string, root: string, log: string): NodeJS.ProcessEnv {
  // libuv could hand file writes to io_uring, which no preloaded library sees: keep it off.
  return { LD_PRELOAD: so, POWERCUT_ROOT: root, POWERCUT_LOG: log, UV_USE_IO_URING: '0' };
}

/** One recorded call (see trace.c): `op` and its fields. */
export interface TraceEvent {
  op: 'W' | 'T' | 'C' | 'R' | 'U' | 'M' | 'D' | 'L' | 'H' | 'X' | 'S' | 'Y';
  a: string;
  b: string;
  x: number;
  y: number;
  data: Buffer;
}

/** Reads a log written by the recorder; a record cut short at the end is dropped. */
export function readTrace(log: string): TraceEvent[] {
  const buf = fs.existsSync(log) ? fs.readFileSync(log) : Buffer.alloc(0);
  const out: TraceEvent[] = [];
  let at = 0;
  while (at + 4 <= buf.length) {
    const len = buf.readUInt32LE(at);
    if (at + 4 + len > buf.length) break;
    let p = at + 4;
    const op = String.fromCharCode(buf[p]!) as TraceEvent['op'];
    p += 1;
    const str = () => {
      const n = buf.readUInt32LE(p);
      const s = buf.subarray(p + 4, p + 4 + n);
      p += 4 + n;
      return s;
    };
    const a = str().toString('utf8');
    const b = str().toString('utf8');
    const x = Number(buf.readBigInt64LE(p));
    const y = Number(buf.readBigInt64LE(p + 8));
    p += 16;
    const data = Buffer.from(str());
    out.push({ op, a, b, x, y, data });
    at += 4 + len;
  }
  return out;
}

type Inode =
  | { kind: 'file'; data: Buffer; mode: number; durable: { data: Buffer; mode: number } }
  | { kind: 'dir'; entries: Map<string, Inode>; mode: number; durable: { entries: Map<string, Inode>; mode: number } }
  | { kind: 'link'; target: string };

/** The tree under `root` as it is on disk now, every part of it durable. */
export function loadTree(root: string): Inode {
  const load = (p: string): Inode => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return { kind: 'link', target: fs.readlinkSync(p) };
    if (st.isDirectory()) {
      const entries = new Map<string, Inode>();
      for (const name of fs.readdirSync(p)) entries.set(name, load(path.join(p, name)));
      return { kind: 'dir', entries, mode: st.mode & 0o7777, durable: { entries: new Map(entries), mode: st.mode & 0o7777 } };
    }
    const data = fs.readFileSync(p);
    return { kind: 'file', data, mode: st.mode & 0o7777, durable: { data, mode: st.mode & 0o7777 } };
  };
  return load(root);
}

/**
 * The volatile tree after replaying `events` over `tree` (what the process saw), with the
 * durable state of each part kept beside it. Returns the same root, changed in place.
 */
export function replay(tree: Inode, root: string, events: readonly TraceEvent[], umask: number): Inode {
  const parts = (p: string): string[] | null => {
    if (p !== root && !p.startsWith(`${root}/`)) return null;
    return p.slice(root.length).split('/').filter(Boolean);
  };
  const lookup = (p: string): { dir: Extract<Inode, { kind: 'dir' }>; name: string; node: Inode | undefined } | null => {
    const ps = parts(p);
    if (!ps || ps.length === 0) return null;
    let dir = tree;
    for (const name of ps.slice(0, -1)) {
      const next = dir.kind === 'dir' ? dir.entries.get(name) : undefined;
      if (!next || next.kind !== 'dir') return null;
      dir = next;
    }
    if (dir.kind !== 'dir') return null;
    const name = ps[ps.length - 1]!;
    return { dir, name, node: dir.entries.get(name) };
  };
  const nodeAt = (p: string): Inode | undefined => (p === root ? tree : lookup(p)?.node);
  const makeDurable = (n: Inode) => {
    if (n.kind === 'file') n.durable = { data: Buffer.from(n.data), mode: n.mode };
    else if (n.kind === 'dir') n.durable = { entries: new Map(n.entries), mode: n.mode };
  };
  const everything = (n: Inode) => {
    makeDurable(n);
    if (n.kind === 'dir') for (const c of n.entries.values()) everything(c);
  };
  for (const e of events) {
    switch (e.op) {
      case 'C': {
        const at = lookup(e.a);
        if (at && !at.node) at.dir.entries.set(at.name, { kind: 'file', data: Buffer.alloc(0), mode: e.x & ~umask & 0o7777, durable: { data: Buffer.alloc(0), mode: e.x & ~umask & 0o7777 } });
        break;
      }
      case 'T': {
        const n = nodeAt(e.a);
        if (n?.kind === 'file') n.data = e.x <= n.data.length ? Buffer.from(n.data.subarray(0, e.x)) : Buffer.concat([n.data, Buffer.alloc(e.x - n.data.length)]);
        break;
      }
      case 'W': {
        const n = nodeAt(e.a);
        if (n?.kind !== 'file') break;
        const end = e.x + e.data.length;
        if (end > n.data.length) n.data = Buffer.concat([n.data, Buffer.alloc(end - n.data.length)]);
        else n.data = Buffer.from(n.data);
        e.data.copy(n.data, e.x);
        break;
      }
      case 'R': {
        const from = lookup(e.a);
        const to = lookup(e.b);
        if (!from?.node) break;
        from.dir.entries.delete(from.name);
        if (to) to.dir.entries.set(to.name, from.node);
        break;
      }
      case 'H': {
        const from = lookup(e.a);
        const to = lookup(e.b);
        if (from?.node && to) to.dir.entries.set(to.name, from.node);
        break;
      }
      case 'U':
      case 'D': {
        const at = lookup(e.a);
        if (at) at.dir.entries.delete(at.name);
        break;
      }
      case 'M': {
        const at = lookup(e.a);
        const mode = e.x & ~umask & 0o7777;
        if (at && !at.node) at.dir.entries.set(at.name, { kind: 'dir', entries: new Map(), mode, durable: { entries: new Map(), mode } });
        break;
      }
      case 'L': {
        const at = lookup(e.b);
        if (at && !at.node) at.dir.entries.set(at.name, { kind: 'link', target: e.a });
        break;
      }
      case 'X': {
        const n = nodeAt(e.a);
        if (n && n.kind !== 'link') n.mode = e.x & 0o7777;
        break;
      }
      case 'S': {
        const n = nodeAt(e.a);
        if (n) makeDurable(n);
        break;
      }
      case 'Y':
        everything(tree);
        break;
    }
  }
  return tree;
}

/**
 * Makes `root` hold the durable part of `tree`: what a disk holds after the cut. Entries that
 * already hold it (same type, bytes, mode, link target) are left as they are, so their stat
 * (inode, ctime) stays what a scan saw; the rest are replaced or removed.
 */
export function writeDurable(tree: Inode, root: string): void {
  const sync = (dir: Extract<Inode, { kind: 'dir' }>, p: string) => {
    const want = dir.durable.entries;
    for (const name of fs.readdirSync(p)) if (!want.has(name)) fs.rmSync(path.join(p, name), { recursive: true, force: true });
    for (const [name, n] of want) {
      const at = path.join(p, name);
      let st: fs.Stats | null = null;
      try {
        st = fs.lstatSync(at);
      } catch {
        st = null;
      }
      if (n.kind === 'link') {
        if (st?.isSymbolicLink() && fs.readlinkSync(at) === n.target) continue;
        if (st) fs.rmSync(at, { recursive: true, force: true });
        fs.symlinkSync(n.target, at);
      } else if (n.kind === 'file') {
        const mode = n.durable.mode;
        if (st?.isFile() && (st.mode & 0o7777) === mode && fs.readFileSync(at).equals(n.durable.data)) continue;
        if (st) fs.rmSync(at, { recursive: true, force: true });
        fs.writeFileSync(at, n.durable.data);
        fs.chmodSync(at, mode);
      } else {
        if (st && !st.isDirectory()) fs.rmSync(at, { force: true });
        if (!st?.isDirectory()) fs.mkdirSync(at);
        fs.chmodSync(at, 0o700);
        sync(n, at);
        fs.chmodSync(at, n.durable.mode);
      }
    }
  };
  if (tree.kind === 'dir') sync(tree, root);
}

/**
 * The points a power cut can fall on that leave different disks: before the first sync, and
 * right after each (between two syncs nothing more became durable). Indexes into `events`: a
 * cut at `k` keeps what events[0..k) made durable.
 */
export function cutPoints(events: readonly TraceEvent[]): number[] {
  const out = [0];
  events.forEach((e, i) => {
    if (e.op === 'S' || e.op === 'Y') out.push(i + 1);
  });
  if (out[out.length - 1] !== events.length) out.push(events.length);
  return out;
}
