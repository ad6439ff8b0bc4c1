/* chanflowc lowers the Cilk functions of the file it compiles; one defined in a header is refused
 * by name (helpers without spawns may live in headers: programs/own_header.c). */
#include <stdio.h>

#include "cilk_in_header.h"

int main(void) {
  printf("%ld\n", count(20));
  return 0;
}
