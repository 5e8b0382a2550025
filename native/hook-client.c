/*
 * takeback's hook client, in C: what `takeback hook <agent>` does first when the capture daemon
 * runs, without starting Node. bin/takeback.js's /bin/sh lines exec it as
 *
 *   takeback-hook <script> <agent>
 *
 * (<script>: the takeback script as the shell was given it, a symlink on PATH or not). It does
 * what forwardEvent and runForwardedHook in server/cli/forward.ts do, which stay the reference:
 * it reads stdin whole, resolves TAKEBACK_HOME as server/core/home.ts does, computes the socket
 * path as server/daemon/address.ts's socketPath does (the install folder's FNV-1a over its
 * UTF-16 code units, the version from its package.json), sends the same request line and follows
 * the same claim / go / ok exchange (a claim that takes the event needs no "go") with the same 3 s
 * wait for the claim, named in the request as its deadline. When the daemon took
 * the event it exits 0 at once. Otherwise it runs `node <script> hook <agent>`, the same stdin
 * bytes through a pipe, with TAKEBACK_HOOK_FORWARDED="<no-daemon|fallback> <socket path>": the
 * Node hook then handles the event in process without asking the daemon again, and starts one at
 * a session's start or a prompt, as it would have. It runs Node without that variable (Node does
 * everything, as without this client) whenever it cannot do what Node would do byte for byte: the
 * daemon turned off, input or environment that is not UTF-8, a home or version it cannot read, a
 * socket path over Linux's 107 bytes. The Node hook checks that the path it is told is its own and
 * asks the daemon itself when it is not, so a drift between the two rules costs time, never an event.
 *
 * Why: a hook process that starts Node only to hand its event over a unix socket pays Node's
 * start (≈ 80 ms quiet, 220 ms on a loaded machine) twice per shell tool call; this pays a few
 * milliseconds (bench/RESULTS.md). It never prints and always exits 0, as the hook does.
 * test/hook-client.test.ts runs it against the Node forwarder on the same events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/** How long the daemon has to claim the event, connect included (ms): forward.ts's CLAIM_TIMEOUT_MS. */
#define CLAIM_TIMEOUT_MS 3000
/** Linux's limit on a unix socket path (bytes, without the final NUL): address.ts's MAX_SOCKET_PATH. */
#define MAX_SOCKET_PATH 107
/** The variable that tells the Node hook how the hand-over went (forward.ts reads it). */
#define RESULT_VAR "TAKEBACK_HOOK_FORWARDED"
/** Past this size (bytes) the hook log is rotated to hook.log.1: log.ts's MAX_LOG_BYTES. */
#define MAX_LOG_BYTES (1024 * 1024)

/* ---- a growing byte buffer ---- */

typedef struct {
  char *p;
  size_t n, cap;
} buf;

static int grow(buf *b, size_t more) {
  if (b->n + more + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int put(buf *b, const char *s, size_t n) {
  if (grow(b, n)) return -1;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
  return 0;
}

static int puts0(buf *b, const char *s) { return put(b, s, strlen(s)); }

/* ---- UTF-8 ---- */

/**
 * Decodes one well-formed UTF-8 sequence at s[0..n) into *cp; returns its length, or 0 when it is
 * not well-formed (overlong, a surrogate, past U+10FFFF, cut short): where Node would put U+FFFD.
 */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned char c = s[0];
  if (c < 0x80) return *cp = c, 1;
  size_t len;
  uint32_t v, min;
  if (c >= 0xc2 && c <= 0xdf) len = 2, v = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) len = 3, v = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) len = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

static int utf8_ok(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = utf8_next(u + i, n - i, &cp);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/** Appends `s` as a JSON string, escaped as JSON.stringify escapes it (`s` well-formed UTF-8). */
static int put_json(buf *b, const char *s, size_t n) {
  if (grow(b, n + 2) || put(b, "\"", 1)) return -1;
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char u[8];
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\b') esc = "\\b";
    else if (c == '\f') esc = "\\f";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c < 0x20) {
      snprintf(u, sizeof u, "\\u%04x", c);
      esc = u;
    }
    if (!esc) continue;
    if (put(b, s + from, i - from) || puts0(b, esc)) return -1;
    from = i + 1;
  }
  return put(b, s + from, n - from) || put(b, "\"", 1);
}

/* ---- the socket path (address.ts) ---- */

/** FNV-1a (32 bits) over the UTF-16 code units of the UTF-8 text `s`, as address.ts's fnv over a JavaScript string. */
static uint32_t fnv_utf16(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strlen(s);
  uint32_t h = 0x811c9dc5u;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = utf8_next(u + i, n - i, &cp);
    i += k ? k : 1; /* never reached: the caller checked the text */
    uint32_t units[2];
    int m = 0;
    if (cp >= 0x10000) {
      units[m++] = 0xd800 + ((cp - 0x10000) >> 10);
      units[m++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    } else units[m++] = cp;
    for (int j = 0; j < m; j++) {
      h ^= units[j];
      h *= 0x01000193u;
    }
  }
  return h;
}

/**
 * `path` normalised as Node's path.posix.normalize does (what path.join ends with): no empty or
 * `.` segments, `..` taken against the segment before it where there is one. Malloc'd, or NULL.
 */
static char *normalize(const char *path) {
  size_t n = strlen(path);
  int abs = n > 0 && path[0] == '/';
  char *out = malloc(n + 3);
  if (!out) return NULL;
  size_t o = 0;   /* bytes of out */
  size_t ups = 0; /* leading `..` segments kept (a relative path) */
  size_t segs = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && path[i] == '/') i++;
    size_t j = i;
    while (j < n && path[j] != '/') j++;
    size_t len = j - i;
    if (len == 0 || (len == 1 && path[i] == '.')) {
      i = j;
      continue;
    }
    if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
      if (segs > ups) {
        while (o > 0 && out[o - 1] != '/') o--;
        if (o > 0) o--;
        segs--;
      } else if (!abs) {
        if (o > 0) out[o++] = '/';
        out[o++] = '.', out[o++] = '.';
        segs++, ups++;
      }
      i = j;
      continue;
    }
    if (o > 0) out[o++] = '/';
    memcpy(out + o, path + i, len);
    o += len;
    segs++;
    i = j;
  }
  out[o] = 0;
  if (abs) {
    memmove(out + 1, out, o + 1);
    out[0] = '/';
  } else if (o == 0) strcpy(out, ".");
  return out;
}

/** A malloc'd concatenation of the strings up to the NULL that ends them, or NULL when memory runs out. */
static char *cat(const char *first, ...) {
  buf b = {0};
  va_list ap;
  va_start(ap, first);
  for (const char *s = first; s; s = va_arg(ap, const char *))
    if (puts0(&b, s)) {
      va_end(ap);
      free(b.p);
      return NULL;
    }
  va_end(ap);
  return b.p ? b.p : strdup("");
}

/** The environment variable `name` when set and not empty, else NULL. */
static const char *env_set(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/**
 * TAKEBACK_HOME as home.ts resolves it: `$TAKEBACK_HOME` as it is, else `$XDG_STATE_HOME/takeback`,
 * else `$HOME/.local/state/takeback` (joined, so normalised). NULL when none is set (Node then
 * asks the password database), or any of them is not UTF-8.
 */
static char *resolve_home(void) {
  const char *th = env_set("TAKEBACK_HOME"), *xdg = env_set("XDG_STATE_HOME"), *home = env_set("HOME");
  if (th) return utf8_ok(th, strlen(th)) ? strdup(th) : NULL;
  const char *base = xdg ? xdg : home;
  if (!base || !utf8_ok(base, strlen(base))) return NULL;
  char *joined = xdg ? cat(xdg, "/takeback", NULL) : cat(home, "/.local/state/takeback", NULL);
  char *out = joined ? normalize(joined) : NULL;
  free(joined);
  return out;
}

/* ---- package.json's version ---- */

static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/**
 * Reads the JSON string at p (its opening quote); returns the character after it, or NULL when it
 * is not one. With `out`, its value (UTF-8) is appended there; a string holding a lone surrogate
 * is refused (Node would make it U+FFFD in the path).
 */
static const char *json_string(const char *p, buf *out) {
  if (*p != '"') return NULL;
  for (p++;;) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c != '\\') {
      if (out && put(out, p, 1)) return NULL;
      p++;
      continue;
    }
    char e = p[1];
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      static const char to[] = "\"\\/\b\f\n\r\t";
      if (out && put(out, &to[simple - "\"\\/bfnrt"], 1)) return NULL;
      p += 2;
      continue;
    }
    if (e != 'u') return NULL;
    uint32_t cp = 0;
    for (int i = 2; i < 6; i++) {
      int h = hexval(p[i]);
      if (h < 0) return NULL;
      cp = cp * 16 + (uint32_t)h;
    }
    p += 6;
    if (cp >= 0xd800 && cp <= 0xdbff && p[0] == '\\' && p[1] == 'u') {
      uint32_t lo = 0;
      for (int i = 2; i < 6; i++) {
        int h = hexval(p[i]);
        if (h < 0) return NULL;
        lo = lo * 16 + (uint32_t)h;
      }
      if (lo < 0xdc00 || lo > 0xdfff) return NULL;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      p += 6;
    } else if (cp >= 0xd800 && cp <= 0xdfff) return NULL;
    if (out) {
      char u[4];
      int k;
      if (cp < 0x80) u[0] = (char)cp, k = 1;
      else if (cp < 0x800) u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
      else if (cp < 0x10000) u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
      else u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)), u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
      if (put(out, u, (size_t)k)) return NULL;
    }
  }
}

/** Skips the JSON value at p; returns the character after it, or NULL when it is not one. */
static const char *json_skip(const char *p, int depth) {
  p = ws(p);
  if (depth > 256) return NULL;
  if (*p == '"') return json_string(p, NULL);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        p = json_string(ws(p), NULL);
        if (!p || *(p = ws(p)) != ':') return NULL;
        p++;
      }
      if (!(p = json_skip(p, depth + 1))) return NULL;
      p = ws(p);
      if (*p == close) return p + 1;
      if (*p != ',') return NULL;
      p++;
    }
  }
  if (!strncmp(p, "true", 4)) return p + 4;
  if (!strncmp(p, "false", 5)) return p + 5;
  if (!strncmp(p, "null", 4)) return p + 4;
  const char *s = p;
  if (*p == '-') p++;
  while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-') p++;
  return p > s ? p : NULL;
}

/**
 * package.json's top-level `version` (the last one, as JSON.parse keeps), malloc'd; "0" when the
 * object has none (package-info.ts's default). NULL when the file cannot be read, is not the JSON
 * object this reads, or `version` is not a string: Node then computes the path itself.
 */
static char *read_version(const char *file) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  buf text = {0};
  char chunk[8192];
  ssize_t r;
  while ((r = read(fd, chunk, sizeof chunk)) > 0)
    if (put(&text, chunk, (size_t)r)) break;
  close(fd);
  if (r != 0 || !text.p || strlen(text.p) != text.n || !utf8_ok(text.p, text.n)) {
    free(text.p);
    return NULL;
  }
  const char *p = text.p;
  if (!strncmp(p, "\xef\xbb\xbf", 3)) {
    /* A BOM: Node reads it as U+FEFF, which JSON.parse refuses (the version is then "0"): Node's to say. */
    free(text.p);
    return NULL;
  }
  buf version = {0};
  int found = 0, ok = 0;
  p = ws(p);
  if (*p == '{') {
    p = ws(p + 1);
    if (*p == '}') ok = 1, p++;
    while (!ok) {
      buf key = {0};
      const char *q = json_string(ws(p), &key);
      if (!q || *(q = ws(q)) != ':') {
        free(key.p);
        break;
      }
      q = ws(q + 1);
      int isVersion = key.p && !strcmp(key.p, "version") && strlen(key.p) == key.n;
      free(key.p);
      if (isVersion) {
        if (*q != '"') break; /* a number or anything else: String(...) is Node's to make */
        version.n = 0;
        if (version.p) version.p[0] = 0;
        q = json_string(q, &version);
        if (!q) break;
        if (!version.p && puts0(&version, "")) break;
        found = 1;
      } else if (!(q = json_skip(q, 1))) break;
      q = ws(q);
      if (*q == '}') {
        ok = 1;
        p = q + 1;
      } else if (*q == ',') p = q + 1;
      else break;
    }
  }
  if (ok && *ws(p) != 0) ok = 0;
  free(text.p);
  if (!ok || (found && (strlen(version.p) != version.n || !utf8_ok(version.p, version.n)))) {
    free(version.p);
    return NULL;
  }
  if (!found) {
    free(version.p);
    return strdup("0");
  }
  return version.p;
}

/* ---- the hook log (log.ts) ---- */

/** Appends `message` to `$home/logs/hook.log` as logHook does (rotated past 1 MB). Never fails. */
static void log_hook(const char *home, const char *message) {
  char *dir = cat(home, "/logs", NULL), *file = cat(home, "/logs/hook.log", NULL), *old = cat(home, "/logs/hook.log.1", NULL);
  if (dir && file && old) {
    mkdir(home, 0700);
    mkdir(dir, 0700);
    struct stat st;
    if (stat(file, &st) == 0 && st.st_size > MAX_LOG_BYTES) rename(file, old);
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      struct timeval tv;
      gettimeofday(&tv, NULL);
      struct tm tm;
      time_t secs = tv.tv_sec;
      gmtime_r(&secs, &tm);
      char when[40];
      strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
      buf line = {0};
      char tail[64];
      snprintf(tail, sizeof tail, ".%03ldZ [%ld] ", (long)(tv.tv_usec / 1000), (long)getpid());
      if (!puts0(&line, when) && !puts0(&line, tail) && !puts0(&line, message) && !put(&line, "\n", 1)) {
        ssize_t w = write(fd, line.p, line.n);
        (void)w;
      }
      free(line.p);
      close(fd);
    }
  }
  free(dir);
  free(file);
  free(old);
}

/* ---- the exchange with the daemon (forward.ts's forwardEvent) ---- */

enum result { DONE, NO_DAEMON, FALLBACK };

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** Waits for `events` on fd until `deadline` (ms, CLOCK_MONOTONIC; -1: for ever). 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, long long deadline) {
  for (;;) {
    int ms = -1;
    if (deadline >= 0) {
      long long left = deadline - now_ms();
      if (left <= 0) return 0;
      ms = left > INT_MAX ? INT_MAX : (int)left;
    }
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, ms);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

#ifdef MSG_NOSIGNAL
#define SEND_FLAGS MSG_NOSIGNAL
#else
#define SEND_FLAGS 0
#endif

/** Sends all of s[0..n) before `deadline`: 0, or -1 (broken, or out of time). */
static int send_all(int fd, const char *s, size_t n, long long deadline) {
  while (n > 0) {
    ssize_t w = send(fd, s, n, SEND_FLAGS);
    if (w > 0) {
      s += w, n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_fd(fd, POLLOUT, deadline) <= 0) return -1;
      continue;
    }
    return -1;
  }
  return 0;
}

/**
 * Hands the request line `req` to the daemon on `socket`, as forwardEvent does: DONE once the
 * daemon claimed the event (and answered, or went away: then logged, since it may have recorded
 * it); NO_DAEMON when nothing listens there (no socket, or a stale one); FALLBACK when a daemon is
 * there but did not claim it within CLAIM_TIMEOUT_MS (busy, refused, broke).
 */
static enum result forward_event(const char *socket_path, const buf *req, long long deadline, const char *home, const char *agent) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return FALLBACK;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, socket_path, strlen(socket_path));
  int r;
  do r = connect(fd, (struct sockaddr *)&addr, sizeof addr);
  while (r < 0 && errno == EINTR);
  if (r < 0 && errno == EINPROGRESS) {
    int err = 0;
    socklen_t len = sizeof err;
    if (wait_fd(fd, POLLOUT, deadline) <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = ETIMEDOUT;
    if (err) errno = err, r = -1;
    else r = 0;
  }
  if (r < 0) {
    int e = errno;
    close(fd);
    return e == ENOENT || e == ECONNREFUSED ? NO_DAEMON : FALLBACK;
  }
  if (send_all(fd, req->p, req->n, deadline)) {
    close(fd);
    return FALLBACK;
  }
  int committed = 0;
  buf in = {0};
  size_t scanned = 0;
  for (;;) {
    /* Out of time, what already came is read all the same: a claim that took the event binds this hook however late it is read. */
    int late = 0;
    if (wait_fd(fd, POLLIN, committed ? -1 : deadline) <= 0) {
      if (committed) {
        close(fd);
        free(in.p);
        return DONE;
      }
      late = 1;
    }
    char chunk[4096];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (late && n <= 0) {
      close(fd);
      free(in.p);
      return FALLBACK; /* no claim in time: the daemon then drops the event */
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) {
      close(fd);
      free(in.p);
      if (!committed) return FALLBACK;
      /* The daemon took the event and then went away: it may have recorded it, so it is not done twice. */
      char *msg = cat("hook ", agent, ": the capture daemon went away while handling the event", n < 0 ? " (" : "", n < 0 ? strerror(errno) : "", n < 0 ? ")" : "", NULL);
      if (msg) log_hook(home, msg);
      free(msg);
      return DONE;
    }
    if (put(&in, chunk, (size_t)n)) {
      close(fd);
      free(in.p);
      return committed ? DONE : FALLBACK;
    }
    /* Each message is one line of JSON.stringify: compared as the daemon writes it (server.ts). */
    char *nl;
    while ((nl = memchr(in.p + scanned, '\n', in.n - scanned))) {
      size_t len = (size_t)(nl - in.p) - scanned;
      const char *line = in.p + scanned;
      scanned += len + 1;
      if (!committed) {
        if (len == 27 && !memcmp(line, "{\"claim\":true,\"taken\":true}", 27)) {
          /* Taken with no "go": the event is the daemon's, however long it takes. */
          committed = 1;
        } else if (late) {
          /* A claim that waits for "go", read after the wait ran out: the daemon drops it without one. */
          close(fd);
          free(in.p);
          return FALLBACK;
        } else if (len == 14 && !memcmp(line, "{\"claim\":true}", 14)) {
          /* From here on the event is the daemon's, however long it takes. */
          committed = 1;
          if (send_all(fd, "{\"go\":true}\n", 12, -1)) {
            /* Gone before it heard "go": it drops the event, so this hook handles it. */
            close(fd);
            free(in.p);
            return FALLBACK;
          }
        } else {
          close(fd);
          free(in.p);
          return FALLBACK;
        }
      } else if ((len == 11 && !memcmp(line, "{\"ok\":true}", 11)) || (len == 12 && !memcmp(line, "{\"ok\":false}", 12))) {
        close(fd);
        free(in.p);
        return DONE;
      }
    }
  }
}

/* ---- Node, when the daemon did not take the event ---- */

/**
 * Replaces this process with `node <script> hook <agent>`, stdin the `text` bytes through a pipe
 * (or this process's own stdin when `text` is NULL: nothing was read), and `told` (when not
 * NULL) in RESULT_VAR. Returns only when Node cannot be started, and then exits 0 quietly.
 */
static void run_node(const char *script, const char *agent, const buf *text, const char *told) {
  if (told) setenv(RESULT_VAR, told, 1);
  else unsetenv(RESULT_VAR);
  if (text) {
    int fds[2];
    if (pipe(fds) == 0) {
      fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#ifdef F_SETPIPE_SZ
      if (text->n > 65536) fcntl(fds[1], F_SETPIPE_SZ, (int)(text->n > 1048576 ? 1048576 : text->n));
#endif
      /* What fits in the pipe is written now; the rest by a child of its own while Node reads. */
      fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
      size_t off = 0;
      while (off < text->n) {
        ssize_t w = write(fds[1], text->p + off, text->n - off);
        if (w > 0) off += (size_t)w;
        else if (w < 0 && errno == EINTR) continue;
        else break;
      }
      if (off < text->n) {
        pid_t pid = fork();
        if (pid == 0) {
          /* Not the agent's stdout and stderr: it waits for them to close, and this child is not the hook. */
          close(fds[0]);
          close(1);
          close(2);
          fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) & ~O_NONBLOCK);
          while (off < text->n) {
            ssize_t w = write(fds[1], text->p + off, text->n - off);
            if (w > 0) off += (size_t)w;
            else if (w < 0 && errno == EINTR) continue;
            else break;
          }
          _exit(0);
        }
      }
      close(fds[1]);
      dup2(fds[0], 0);
      if (fds[0] != 0) close(fds[0]);
    } else {
      /* No pipe: Node reads an empty stdin, as its own readStdin gives '' when it cannot read. */
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
    }
  }
  char *argv[] = {"node", (char *)script, "hook", (char *)agent, NULL};
  execvp("node", argv);
  _exit(0);
}

/** The value of TAKEBACK_HOOK_DAEMON turns the daemon off (core/switch.ts's SWITCH_OFF, any case). */
static int daemon_off(void) {
  const char *v = getenv("TAKEBACK_HOOK_DAEMON");
  if (!v) return 0;
  static const char *off[] = {"0", "false", "off", "no"};
  for (size_t i = 0; i < sizeof off / sizeof *off; i++)
    if (!strcasecmp(v, off[i])) return 1;
  return 0;
}

/** Whether environment entry `kv` (NAME=value) is one the daemon gets (address.ts's FORWARDED_ENV), as `name` and `value`. */
static int forwarded(const char *kv, size_t *name_len) {
  const char *eq = strchr(kv, '=');
  if (!eq) return 0;
  size_t n = (size_t)(eq - kv);
  *name_len = n;
  if ((n >= 9 && !strncmp(kv, "TAKEBACK_", 9)) || (n >= 4 && !strncmp(kv, "GIT_", 4))) {
    /* bin/takeback.js hands NODE_EXTRA_CA_CERTS back to Node under this name and takes it out before forwarding. */
    return !(n == 17 && !strncmp(kv, "TAKEBACK_CA_CERTS", 17)) && !(n == strlen(RESULT_VAR) && !strncmp(kv, RESULT_VAR, n)) && !(n == 13 && !strncmp(kv, "TAKEBACK_HOME", 13));
  }
  static const char *exact[] = {"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"};
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
    if (n == strlen(exact[i]) && !strncmp(kv, exact[i], n)) return 1;
  return 0;
}

/**
 * The request line (address.ts's ForwardRequest, then a newline), or -1 when something is not
 * UTF-8. `deadline`: when the wait for a claim ends (ms, CLOCK_MONOTONIC, as the daemon reads it).
 */
static int build_request(buf *req, const char *agent, const buf *text, const char *cwd, const char *home, long long deadline) {
  if (puts0(req, "{\"agent\":") || put_json(req, agent, strlen(agent)) || puts0(req, ",\"text\":") || put_json(req, text->p ? text->p : "", text->n) ||
      puts0(req, ",\"cwd\":") || put_json(req, cwd, strlen(cwd)) || puts0(req, ",\"env\":{"))
    return -1;
  int first = 1;
  for (char **e = environ; *e; e++) {
    size_t n;
    if (!forwarded(*e, &n)) continue;
    /* A name seen before: getenv's (and Node's) value is the first one. */
    int seen = 0;
    for (char **d = environ; d < e && !seen; d++) seen = !strncmp(*d, *e, n + 1);
    if (seen) continue;
    const char *v = *e + n + 1;
    if (!utf8_ok(*e, strlen(*e))) return -1;
    if ((!first && put(req, ",", 1)) || put_json(req, *e, n) || put(req, ":", 1) || put_json(req, v, strlen(v))) return -1;
    first = 0;
  }
  if ((!first && put(req, ",", 1)) || puts0(req, "\"TAKEBACK_HOME\":") || put_json(req, home, strlen(home)) || puts0(req, "}")) return -1;
#ifdef __linux__
  /* Linux's CLOCK_MONOTONIC is the clock Node's process.hrtime reads: the daemon compares with it. */
  char tail[40];
  snprintf(tail, sizeof tail, ",\"deadline\":%lld}\n", deadline);
  return puts0(req, tail) ? -1 : 0;
#else
  (void)deadline;
  return puts0(req, "}\n") ? -1 : 0;
#endif
}

int main(int argc, char **argv) {
  if (argc != 3) return 0;
  const char *script = argv[1], *agent = argv[2];
  if (daemon_off() || (getenv("TAKEBACK_NATIVE") && !strcmp(getenv("TAKEBACK_NATIVE"), "0"))) run_node(script, agent, NULL, NULL);

  buf text = {0};
  char chunk[65536];
  for (;;) {
    ssize_t r = read(0, chunk, sizeof chunk);
    if (r > 0) {
      if (put(&text, chunk, (size_t)r)) break;
    } else if (r < 0 && errno == EINTR) continue;
    else {
      /* Unreadable stdin is an empty event, as readStdin makes it. */
      if (r < 0) text.n = 0;
      break;
    }
  }

  char *home = NULL, *root = NULL, *version = NULL, *socket_path = NULL, *real = NULL;
  char cwd[PATH_MAX];
  buf req = {0};
  if (!utf8_ok(text.p ? text.p : "", text.n) || !utf8_ok(agent, strlen(agent)) || !getcwd(cwd, sizeof cwd) || !utf8_ok(cwd, strlen(cwd))) goto node;
  if (!(home = resolve_home())) goto node;
  /* The install folder, as Node finds it: the script's real path, two folders up (bin/takeback.js). */
  if (!(real = realpath(script, NULL)) || !utf8_ok(real, strlen(real))) goto node;
  {
    char *up = cat(real, "/../..", NULL);
    root = up ? normalize(up) : NULL;
    free(up);
  }
  if (!root) goto node;
  {
    char *pkg = cat(root, "/package.json", NULL);
    version = pkg ? read_version(pkg) : NULL;
    free(pkg);
  }
  if (!version) goto node;
  {
    char hash[9];
    snprintf(hash, sizeof hash, "%08x", fnv_utf16(root));
    char *joined = cat(home, "/run/capture-", version, "-", hash, ".sock", NULL);
    socket_path = joined ? normalize(joined) : NULL;
    free(joined);
  }
  if (!socket_path || strlen(socket_path) > MAX_SOCKET_PATH || strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) goto node;
  long long deadline = now_ms() + CLAIM_TIMEOUT_MS;
  if (build_request(&req, agent, &text, cwd, home, deadline)) goto node;

  enum result r = forward_event(socket_path, &req, deadline, home, agent);
  if (r == DONE) return 0;
  {
    char *told = cat(r == NO_DAEMON ? "no-daemon " : "fallback ", socket_path, NULL);
    if (told) run_node(script, agent, &text, told);
  }
node:
  run_node(script, agent, &text, NULL);
  return 0;
}
