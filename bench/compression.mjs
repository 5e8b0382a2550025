// Does compressing blobs pay? Bytes on disk (4 KB blocks) and time, with Node's zlib, on what
// takeback keeps: source text, a real dependency tree (JavaScript, JSON, binaries), and versions
// of a 1 MB text file.
import { readdirSync, readFileSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync, inflateRawSync, constants } from 'node:zlib';

const BLOCK = 4096;
const blocks = (n) => Math.ceil(n / BLOCK) * BLOCK;

/** Files under `dir` (at most `max`, at most 5 MB each: what takeback would keep). */
export function corpus(dir, max = 4000) {
  const out = [];
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      if (out.length >= max) return;
      if (n === '.git') continue;
      const p = join(d, n);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && st.size <= 5 * 1048576) out.push(readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/**
 * For each zlib level: bytes and disk blocks before and after, and the time to compress and to
 * decompress (MB/s of raw bytes). `minSize`: smaller blobs are left raw (they fill one block
 * either way); a blob that does not shrink by an eighth is left raw too.
 */
export function measure(buffers, levels = [1, 6], minSize = BLOCK) {
  const raw = buffers.reduce((a, b) => a + b.length, 0);
  const rawDisk = buffers.reduce((a, b) => a + blocks(b.length), 0);
  const rows = [];
  for (const level of levels) {
    let bytes = 0;
    let disk = 0;
    let tc = 0;
    let td = 0;
    let compressed = 0;
    for (const b of buffers) {
      if (b.length < minSize) {
        bytes += b.length;
        disk += blocks(b.length);
        continue;
      }
      const t0 = process.hrtime.bigint();
      const z = deflateRawSync(b, { level, strategy: constants.Z_DEFAULT_STRATEGY });
      const t1 = process.hrtime.bigint();
      tc += Number(t1 - t0) / 1e6;
      if (z.length > b.length - b.length / 8) {
        bytes += b.length;
        disk += blocks(b.length);
        continue;
      }
      compressed++;
      const t2 = process.hrtime.bigint();
      inflateRawSync(z);
      td += Number(process.hrtime.bigint() - t2) / 1e6;
      bytes += z.length;
      disk += blocks(z.length);
    }
    rows.push({ level, bytes, disk, compressMBs: raw / 1048576 / (tc / 1000), decompressMBs: raw / 1048576 / (td / 1000), compressed });
  }
  return { files: buffers.length, raw, rawDisk, rows };
}
