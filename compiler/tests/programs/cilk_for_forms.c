/* cilk_for in the forms a review of its lowering found wrong (each once compiled to a different
 * result than its elision's, or not at all): a body that is an if without else (on a CPU device
 * the loop may run where it is); a start with an effect, evaluated once; a name holding
 * "cilk_for"; the keyword through a macro; an inner i hiding the outer one (two loops, not one
 * range); an empty outer range whose inner limit reads through a null pointer (never evaluated);
 * a body calling a Cilk function without spawning it (an iteration per task); more loops in a
 * function than get a leaf of one grain.
 * usage: cilk_for_forms [N] */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#define PAR_FOR cilk_for

long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

/* A Cilk function holding the loops (their bodies run where they are on a CPU device). */
long in_task(long *line, long cols) {
  cilk_for (long i = 0; i < cols; i++)
    if (i % 2) line[i] += 1;
  long k = 5;
  cilk_for (long i = k++; i < cols; i++) line[i] += i;
  long s = k * 1000;
  for (long i = 0; i < cols; i++) s += line[i] * (i % 5);
  return s;
}

/* Nine loops in one function: more than each get a leaf of one grain (a function's node has a
 * port per loop leaf, part and one-grain leaf, at most 32 in all), so they take the heap's blocks. */
long nine_loops(long *v, long n) {
  cilk_for (long i = 0; i < n; i++) v[i] = i;
  cilk_for (long i = 0; i < n; i++) v[i] += 1;
  cilk_for (long i = 0; i < n; i++) v[i] *= 3;
  cilk_for (long i = 0; i < n; i++) v[i] -= i % 4;
  cilk_for (long i = 0; i < n; i++) v[i] += 5;
  cilk_for (long i = 0; i < n; i++) v[i] ^= 6;
  cilk_for (long i = 0; i < n; i++) v[i] += i / 7;
  cilk_for (long i = 0; i < n; i++) v[i] *= 2;
  cilk_for (long i = 0; i < n; i++) v[i] -= 9;
  long s = 0;
  for (long i = 0; i < n; i++) s += v[i] * (i % 11);
  return s;
}

int main(int argc, char *argv[]) {
  long cols = argc > 1 ? atol(argv[1]) : 700;
  long *line = calloc(cols, sizeof(long));
  long k = 5, cilk_for_scale = 3, *nothing = 0;
  cilk_for (long i = 0; i < cols; i++)
    if (i % 2) line[i] += 1;
  cilk_for (long i = k++; i < cols; i++) line[i] += i * cilk_for_scale;
  PAR_FOR (long i = 0; i < cols; i++) line[i] *= 2;
  long *twice = calloc(cols, sizeof(long));
  cilk_for (long i = 0; i < 4; i++)
    cilk_for (long i = 0; i < cols; i++) twice[i] = 2 * i; /* every outer iteration writes the same */
  cilk_for (long i = 0; i < 0; i++)
    cilk_for (long j = 0; j < *nothing; j++) line[j] = -1;
  long line_sum = k * 1000;
  for (long i = 0; i < cols; i++) line_sum += line[i] * (i % 7) + twice[i];
  long task_sum = cilk_spawn in_task(line, cols);
  cilk_sync;
  long nine = cilk_spawn nine_loops(twice, cols);
  cilk_sync;
  long fibs[24];
  cilk_for (int i = 0; i < 24; i++) fibs[i] = fib(i);
  long fib_sum = 0;
  for (int i = 0; i < 24; i++) fib_sum += fibs[i];
  printf("line %ld, in a task %ld, fibs %ld, nine loops %ld\n", line_sum, task_sum, fib_sum, nine);
  free(line);
  free(twice);
  return 0;
}
