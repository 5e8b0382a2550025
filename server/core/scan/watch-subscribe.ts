import { closeSync, constants, fstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

/*
 * @parcel/watcher's subscribe, made one at a time in this process, with the descriptors a failed
 * one leaves open closed.
 *
 * On Linux a subscription first lists the whole tree (its inotify backend's crawl): it opens the
 * root (`open(root, O_RDONLY)`, not close-on-exec) and then, depth first, each folder on its way
 * (`openat(parent, name, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)`
 * and `fdopendir`). When a folder it has listed cannot be opened a moment later (removed, or
 * swapped for a link, between its parent's listing and its own opening) the crawl throws and
 * closes none of them: the root's descriptor and an open folder stream for each folder on the way
 * are held for the life of the process, a build removing folders while a watcher (re)subscribes
 * suffices, and a long-lived daemon or sidecar gathers more with every such subscription.
 *
 * So after a subscription rejects, the descriptors that crawl opened and left are closed here:
 * those open now and not before the call, on a folder inside the tree subscribed, with exactly
 * the crawl's open flags. No other part of this process opens a folder so (Node opens everything
 * close-on-exec, the native module opens folders blocking or O_PATH, SQLite close-on-exec), and
 * only one subscription's
 * crawl runs at a time (the calls are chained; the library's one inotify backend takes a lock for
 * each subscription anyway, so the chain costs no parallelism): no descriptor of another owner is
 * taken. The folder streams' memory stays lost (the library holds no pointer to them either). A
 * descriptor number the crawl reused from one closed meanwhile is left open: a leak missed, never
 * a wrong close.
 */

/** What @parcel/watcher reports: a path and what happened to it. */
export interface ParcelEvent {
  path: string;
  type: 'create' | 'update' | 'delete';
}

/** A subscription made by @parcel/watcher. */
export interface ParcelSubscription {
  unsubscribe(): Promise<void>;
}

/** The part of @parcel/watcher this process uses. */
export interface Parcel {
  subscribe(dir: string, fn: (err: Error | null, events: ParcelEvent[]) => unknown, opts?: { ignore?: string[]; backend?: 'inotify' }): Promise<ParcelSubscription>;
}

/** Linux's O_CLOEXEC (the same on every architecture Node runs on); not in fs.constants. */
const O_CLOEXEC = 0o2000000;

/** Linux's O_LARGEFILE, which the kernel adds to every open of a 64-bit process (its value differs by architecture). */
const O_LARGEFILE = process.arch === 'arm64' || process.arch === 'arm' ? 0o400000 : 0o100000;

/** The crawl's open of the root: read-only, nothing else (O_LARGEFILE aside). */
const ROOT_FLAGS = constants.O_RDONLY;

/** The crawl's open of each folder (O_NOCTTY is not kept in a descriptor's flags). */
const FOLDER_FLAGS = constants.O_RDONLY | O_CLOEXEC | constants.O_DIRECTORY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * The descriptors of this process open on a folder with the crawl's flags (numbers), read from
 * /proc/self/fd and /proc/self/fdinfo; empty where those cannot be read. With `under` (a real
 * path), only those whose folder is `under` or inside it, as the kernel names it now: a crawl of
 * that tree opens nothing else, and a folder it left open that has since moved out of the tree
 * is a leak missed, never another owner's descriptor closed.
 */
export function crawlDescriptors(under?: string): Set<number> {
  const found = new Set<number>();
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return found;
  }
  for (const name of fds) {
    const fd = Number(name);
    try {
      const m = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${name}`, 'utf8'));
      if (!m) continue;
      const flags = parseInt(m[1]!, 8) & ~O_LARGEFILE;
      if (flags !== ROOT_FLAGS && flags !== FOLDER_FLAGS) continue;
      if (!fstatSync(fd).isDirectory()) continue;
      if (under !== undefined) {
        const at = readlinkSync(`/proc/self/fd/${name}`);
        if (at !== under && !at.startsWith(under === '/' ? '/' : `${under}/`)) continue;
      }
      found.add(fd);
    } catch {
      // closed meanwhile (the listing's own descriptor among them)
    }
  }
  return found;
}

/** The newest subscription of this process not yet settled (its outcome dropped), or null. */
let pending: Promise<void> | null = null;

/**
 * `parcel.subscribe(dir, fn, opts)`, called at once when no earlier call of this function in the
 * process is still unsettled, else once the last of them has settled; resolves to the
 * subscription, or rejects with the library's error after closing the descriptors its crawl left
 * open (see the module's comment; Linux only, where that crawl runs).
 */
export function subscribeWatch(
  parcel: Parcel,
  dir: string,
  fn: (err: Error | null, events: ParcelEvent[]) => unknown,
  opts: { ignore?: string[]; backend?: 'inotify' },
): Promise<ParcelSubscription> {
  const run = async (): Promise<ParcelSubscription> => {
    const before = process.platform === 'linux' ? crawlDescriptors() : null;
    try {
      return await parcel.subscribe(dir, fn, opts);
    } catch (e) {
      if (before) {
        let real: string | undefined;
        try {
          real = realpathSync(dir);
        } catch {
          // The root itself is gone: what its crawl left open is named by no path inside it.
        }
        for (const fd of real === undefined ? [] : crawlDescriptors(real)) {
          if (before.has(fd)) continue;
          try {
            closeSync(fd);
          } catch {
            // closed already
          }
        }
      }
      throw e;
    }
  };
  // Called now when nothing is pending: the library starts its crawl on its own thread while
  // this one goes on (the caller's first scan, say).
  const p = pending ? pending.then(run) : run();
  const settled = p.then(
    () => {},
    () => {},
  );
  pending = settled;
  void settled.then(() => {
    if (pending === settled) pending = null;
  });
  return p;
}
