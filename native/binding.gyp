{
  "targets": [
    {
      "target_name": "takeback_native",
      "sources": ["scan-check.c", "scan-list.c", "git-index.c", "sync-paths.c"],
      "cflags": ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-lpthread"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [["OS=='win'", { "sources!": ["scan-check.c", "scan-list.c", "git-index.c", "sync-paths.c"] }]]
    }
  ]
}
