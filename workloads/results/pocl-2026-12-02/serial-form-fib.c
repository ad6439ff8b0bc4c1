#include <stdio.h>
#include <time.h>
typedef unsigned char uchar; typedef unsigned int uint;
__attribute__((noinline)) long fib_es(long n) {
  long cf_s_n[64]; long cf_s_x[64]; uchar cf_s_resume_at[64]; uint cf_depth = 0; long cf_value = 0;
  for (;;) {
      {
        if (n <= 2) { cf_value = n == 0 ? 0 : 1; goto cf_return; }
        long cf_r1;
        { long cf_a0 = n - 1; cf_s_n[cf_depth] = n; cf_s_resume_at[cf_depth] = 1; ++cf_depth; n = cf_a0; goto cf_call; }
      cf_resume_1:
        n = cf_s_n[cf_depth]; cf_r1 = cf_value; long x = cf_r1; long cf_r2;
        { long cf_a0 = n - 2; cf_s_n[cf_depth] = n; cf_s_x[cf_depth] = x; cf_s_resume_at[cf_depth] = 2; ++cf_depth; n = cf_a0; goto cf_call; }
      cf_resume_2:
        n = cf_s_n[cf_depth]; x = cf_s_x[cf_depth]; cf_r2 = cf_value; long y = cf_r2;
        { cf_value = x + y; goto cf_return; }
      }
    cf_return:
      if (cf_depth == 0) return cf_value;
      --cf_depth;
      switch (cf_s_resume_at[cf_depth]) { case 1: goto cf_resume_1; case 2: goto cf_resume_2; }
    cf_call:
      if (cf_depth == 64u) return -1;
  }
}
__attribute__((noinline)) long fib_rec(long n) { if (n <= 2) return n == 0 ? 0 : 1; return fib_rec(n-1) + fib_rec(n-2); }
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int c, char**v){ long n = 30; volatile long s=0; double best1=1e9,best2=1e9;
  for(int r=0;r<7;r++){double t=now(); s+=fib_es(n); t=now()-t; if(t<best1)best1=t; t=now(); s+=fib_rec(n); t=now()-t; if(t<best2)best2=t;}
  printf("explicit stack %.3f ms, recursive %.3f ms (%ld)\n", best1, best2, (long)s); }
