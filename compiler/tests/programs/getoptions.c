/* Host code only (no Cilk function): varargs, which device code could not have. */
#include "getoptions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int get_options(int argc, char *argv[], ...) {
  for (int i = 1; i < argc; i++) {
    va_list ap;
    va_start(ap, argv);
    int matched = 0;
    for (const char *name; !matched && (name = va_arg(ap, const char *)) != 0;) {
      const int kind = va_arg(ap, int);
      int *value = va_arg(ap, int *);
      if (strcmp(argv[i], name) != 0) continue;
      matched = 1;
      if (kind == BOOL_ARG) {
        *value = 1;
      } else if (i + 1 < argc) {
        *value = atoi(argv[++i]);
      } else {
        fprintf(stderr, "%s needs a value\n", name);
        va_end(ap);
        return 0;
      }
    }
    va_end(ap);
    if (!matched) {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 0;
    }
  }
  return 1;
}
