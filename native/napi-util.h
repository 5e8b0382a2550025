/*
 * What every part of takeback's native module needs of Node-API alike: throwing an error with a
 * message, and copying a JavaScript string out as UTF-8.
 */
#ifndef TAKEBACK_NAPI_UTIL_H
#define TAKEBACK_NAPI_UTIL_H

#include <node_api.h>
#include <stdlib.h>

/* Throws a JavaScript Error with message `msg`; returns NULL, for `return tb_fail(...)`. */
static inline napi_value tb_fail(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

/*
 * A NUL-terminated UTF-8 copy of JavaScript string `v` that the caller frees, its length in
 * bytes in `*len` when `len` is not NULL; NULL when `v` is not a string or memory runs out.
 */
static inline char *tb_utf8(napi_env env, napi_value v, size_t *len) {
  size_t n;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) return NULL;
  char *s = malloc(n + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, v, s, n + 1, &n) != napi_ok) {
    free(s);
    return NULL;
  }
  if (len) *len = n;
  return s;
}

#endif
