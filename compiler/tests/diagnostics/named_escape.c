/* A \N escape that names no character: Clang 15 (chanflowc's front end) reads past the end of such a
 * literal, so chanflowc refuses it first (found by fuzzing). A C:\Names path in a comment is fine. */
#include <stdio.h>

int main(void) {
  printf("done\N");
  return 0;
}
