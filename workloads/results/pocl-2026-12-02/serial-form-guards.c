/* fib's explicit-stack serial form as host C: as chanflowc emitted it before (fib_stack), with the
 * opening guard run at each call on its argument (fib_guard: the shape of the code chanflowc now
 * emits, in one copy), and plain recursion kept out of line (fib_rec). Best of 7. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef unsigned char uchar; typedef unsigned int uint;
__attribute__((noinline)) long fib_stack(long n) {
  long cf_s_n[64]; long cf_s_x[64]; uchar cf_s_resume_at[64]; uint cf_depth = 0; long cf_value = 0;
  for (;;) {
    if (n <= 2) { cf_value = n == 0 ? 0 : 1; goto cf_return; }
    long x, y;
    { long a = n - 1; cf_s_n[cf_depth] = n; cf_s_resume_at[cf_depth] = 1; ++cf_depth; n = a; continue; }
  cf_resume_1:
    n = cf_s_n[cf_depth]; x = cf_value;
    { long a = n - 2; cf_s_n[cf_depth] = n; cf_s_x[cf_depth] = x; cf_s_resume_at[cf_depth] = 2; ++cf_depth; n = a; continue; }
  cf_resume_2:
    n = cf_s_n[cf_depth]; x = cf_s_x[cf_depth]; y = cf_value;
    cf_value = x + y;
  cf_return:
    if (cf_depth == 0) return cf_value;
    --cf_depth;
    switch (cf_s_resume_at[cf_depth]) { case 1: goto cf_resume_1; case 2: goto cf_resume_2; }
  }
}
/* the callee's leading guard evaluated at the call: a call that returns at once pushes nothing */
__attribute__((noinline)) long fib_guard(long n) {
  long cf_s_n[64]; long cf_s_x[64]; uchar cf_s_resume_at[64]; uint cf_depth = 0; long cf_value = 0;
  for (;;) {
    if (n <= 2) { cf_value = n == 0 ? 0 : 1; goto cf_return; }
    long x, y;
    { long a = n - 1; { long n = a; if (n <= 2) { cf_value = n == 0 ? 0 : 1; goto cf_after_1; } }
      cf_s_n[cf_depth] = n; cf_s_resume_at[cf_depth] = 1; ++cf_depth; n = a; continue; }
  cf_resume_1:
    n = cf_s_n[cf_depth];
  cf_after_1:
    x = cf_value;
    { long a = n - 2; { long n = a; if (n <= 2) { cf_value = n == 0 ? 0 : 1; goto cf_after_2; } }
      cf_s_n[cf_depth] = n; cf_s_x[cf_depth] = x; cf_s_resume_at[cf_depth] = 2; ++cf_depth; n = a; continue; }
  cf_resume_2:
    n = cf_s_n[cf_depth]; x = cf_s_x[cf_depth];
  cf_after_2:
    y = cf_value;
    cf_value = x + y;
  cf_return:
    if (cf_depth == 0) return cf_value;
    --cf_depth;
    switch (cf_s_resume_at[cf_depth]) { case 1: goto cf_resume_1; case 2: goto cf_resume_2; }
  }
}
__attribute__((noinline)) long fib_rec(long n) { if (n <= 2) return n == 0 ? 0 : 1; return fib_rec(n-1) + fib_rec(n-2); }
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int argc,char**argv){ long n=argc>1?atol(argv[1]):30; long (*f[3])(long)={fib_stack,fib_guard,fib_rec}; const char*nm[3]={"stack","guard","rec"};
 for(int k=0;k<3;k++){double best=1e9;long r=0;for(int i=0;i<7;i++){double t=now();r=f[k](n);t=now()-t;if(t<best)best=t;} printf("%s %ld %.3f ms\n",nm[k],r,best);} }
