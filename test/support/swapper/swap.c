/*
 * The swapping loop of the race tests: exchanges the paths argv[1] and argv[2] (renameat2 with
 * RENAME_EXCHANGE, as fast as it can) while told to go. Reads commands on stdin: 'g' (go), 's'
 * (stop after an even number of exchanges, both back in place, and answer 's' on stdout); at the
 * end of stdin it puts both back in place and exits.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static int exchange(const char *a, const char *b) { return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */); }
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long n = 0;
  int going = 0;
  struct pollfd p = { .fd = 0, .events = POLLIN };
  for (;;) {
    if (!going || (n & 63) == 0) {
      if (poll(&p, 1, going ? 0 : -1) > 0) {
        char c;
        if (read(0, &c, 1) <= 0) break;
        if (c == 'g') going = 1;
        if (c == 's') {
          going = 0;
          if ((n & 1) && exchange(argv[1], argv[2]) == 0) n++;
          if (write(1, "s", 1) != 1) return 1;
        }
        continue;
      }
    }
    if (going) {
      if (exchange(argv[1], argv[2]) != 0) { perror("renameat2"); return 1; }
      n++;
    }
  }
  if ((n & 1) && exchange(argv[1], argv[2]) == 0) n++;
  return 0;
}
