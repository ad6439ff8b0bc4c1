/* fib's serial form as chanflowc emits it (`chanflowc --emit=cl workloads/fib/fib.c`: fib__serial and
 * its frames), before (fib_pushing: both calls push a frame) and after (the call the return adds to
 * goes on as the activation), as host C: __global defined away, the heap's calls malloc and free.
 * usage: cc -O2 -w summed-calls-host.c && ./a.out [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define __global
typedef unsigned char uchar; typedef unsigned int uint; typedef unsigned long ulong;
typedef struct { int x; } chanflow_node_env;
static void* chanflow_stack_chunk(const chanflow_node_env* e, unsigned long n) { (void)e; return malloc(n); }
static void chanflow_free(const chanflow_node_env* e, void* p) { (void)e; free(p); }
static void chanflow_report(const chanflow_node_env* e, int a, unsigned b, unsigned c) { (void)e; (void)a; (void)b; (void)c; }
#define CHANFLOW_ERR_HELPER_STACK 1
/* 32 frames of 'fib' spilled from its private ones to the device heap */
typedef struct fib_pushing__frames {
  __global struct fib_pushing__frames *cf_below; /* the chunk before it (0: none) */
  __global struct fib_pushing__frames *cf_above; /* the one after it, kept once taken (0: none) */
  long n[32];
  long x[32];
  uchar resume_at[32];
} fib_pushing__frames;

/* fib's serial form, run by its tasks from the run's serial depth on (granularity control) */
long fib_pushing(__global const chanflow_node_env *cf_env, long n) {
  /* 'fib' calls itself: its activations run on an explicit stack (OpenCL C has no recursion), a field an
   * array, the newest 64 frames in private memory and older ones on the device heap */
  long cf_s_n[64];
  long cf_s_x[64];
  uchar cf_s_resume_at[64]; /* the call each frame goes on from */
  uint cf_depth = 0;
  __global fib_pushing__frames *cf_spilled = 0; /* the frames below these: the newest chunk on the heap */
  __global fib_pushing__frames *cf_chunks = 0;  /* the chunks this call took, the oldest first */
  long cf_value = 0;                            /* what the last activation returned */
  for (;;) { /* around the loop of activations: a chunk taken, or the call's end */
    for (;;) {
      {
        if (n <= 2) {
          {
            cf_value = n == 0 ? 0 : 1;
            goto cf_return;
          }
        }
        long cf_r1;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 1;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_resume_at[cf_depth] = 1;
            ++cf_depth;
            n = cf_a0;
            goto cf_call;
          }
        }
        cf_r1 = cf_value;
        long x = cf_r1;
        long cf_r2;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 2;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_x[cf_depth] = x;
            cf_s_resume_at[cf_depth] = 2;
            ++cf_depth;
            n = cf_a0;
            goto cf_call;
          }
        }
        cf_r2 = cf_value;
        long y = cf_r2;
        (void)0 /* cilk_sync: its children have returned */;
        {
          cf_value = x + y;
          goto cf_return;
        }
      }
      goto cf_return; /* below: the copy the calls resume in */
      {
        if (n <= 2) {
          {
            cf_value = n == 0 ? 0 : 1;
            goto cf_return;
          }
        }
        long cf_r1;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 1;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_resume_at[cf_depth] = 1;
            ++cf_depth;
            n = cf_a0;
            goto cf_call;
          cf_resume_1:;
            n = cf_s_n[cf_depth];
          }
        }
        cf_r1 = cf_value;
        long x = cf_r1;
        long cf_r2;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 2;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_x[cf_depth] = x;
            cf_s_resume_at[cf_depth] = 2;
            ++cf_depth;
            n = cf_a0;
            goto cf_call;
          cf_resume_2:;
            n = cf_s_n[cf_depth];
            x = cf_s_x[cf_depth];
          }
        }
        cf_r2 = cf_value;
        long y = cf_r2;
        (void)0 /* cilk_sync: its children have returned */;
        {
          cf_value = x + y;
          goto cf_return;
        }
      }
    cf_return:
      if (cf_depth == 0) {
        if (!cf_spilled)
          break;
        /* the newest chunk's frames back from the device heap */
        for (uint cf_k = 0; cf_k < 32u; ++cf_k) {
          cf_s_n[cf_k] = cf_spilled->n[cf_k];
          cf_s_x[cf_k] = cf_spilled->x[cf_k];
          cf_s_resume_at[cf_k] = cf_spilled->resume_at[cf_k];
        }
        cf_spilled = cf_spilled->cf_below;
        cf_depth = 32u;
      }
      --cf_depth;
      switch (cf_s_resume_at[cf_depth]) {
      case 1:
        goto cf_resume_1;
      case 2:
        goto cf_resume_2;
      }
    cf_call:
      if (cf_depth == 64u)
        break;
    }
    if (cf_depth == 64u) {
      /* the private frames are full: the older half to the device heap */
      __global fib_pushing__frames *cf_chunk = cf_spilled ? cf_spilled->cf_above : cf_chunks;
      if (!cf_chunk) {
        cf_chunk = (__global fib_pushing__frames *)chanflow_stack_chunk(cf_env, sizeof(fib_pushing__frames));
        if (!cf_chunk) { /* the depth reached: these frames and the spilled ones */
          uint cf_deep = 64u;
          for (__global fib_pushing__frames *cf_c = cf_spilled; cf_c; cf_c = cf_c->cf_below)
            cf_deep += 32u;
          chanflow_report(cf_env, CHANFLOW_ERR_HELPER_STACK, cf_deep, 0u);
          return cf_value;
        }
        cf_chunk->cf_below = cf_spilled;
        cf_chunk->cf_above = 0;
        if (cf_spilled)
          cf_spilled->cf_above = cf_chunk;
        else
          cf_chunks = cf_chunk;
      }
      for (uint cf_k = 0; cf_k < 32u; ++cf_k) {
        cf_chunk->n[cf_k] = cf_s_n[cf_k];
        cf_s_n[cf_k] = cf_s_n[cf_k + 32u];
        cf_chunk->x[cf_k] = cf_s_x[cf_k];
        cf_s_x[cf_k] = cf_s_x[cf_k + 32u];
        cf_chunk->resume_at[cf_k] = cf_s_resume_at[cf_k];
        cf_s_resume_at[cf_k] = cf_s_resume_at[cf_k + 32u];
      }
      cf_spilled = cf_chunk;
      cf_depth = 32u;
    } else {
      while (cf_chunks) { /* the chunks back to the device heap */
        __global void *cf_chunk = cf_chunks;
        cf_chunks = cf_chunks->cf_above;
        chanflow_free(cf_env, cf_chunk);
      }
      return cf_value;
    }
  }
}

/* 32 frames of 'fib' spilled from its private ones to the device heap */
typedef struct fib__serial__frames {
  __global struct fib__serial__frames *cf_below; /* the chunk before it (0: none) */
  __global struct fib__serial__frames *cf_above; /* the one after it, kept once taken (0: none) */
  long n[32];
  unsigned long cf_sum[32];
  uchar resume_at[32];
} fib__serial__frames;

/* fib's serial form, run by its tasks from the run's serial depth on (granularity control) */
long fib__serial(__global const chanflow_node_env *cf_env, long n) {
  /* 'fib' calls itself: its activations run on an explicit stack (OpenCL C has no recursion), a field an
   * array, the newest 64 frames in private memory and older ones on the device heap */
  long cf_s_n[64];
  unsigned long cf_s_cf_sum[64];
  uchar cf_s_resume_at[64]; /* the call each frame goes on from */
  uint cf_depth = 0;
  __global fib__serial__frames *cf_spilled = 0; /* the frames below these: the newest chunk on the heap */
  __global fib__serial__frames *cf_chunks = 0;  /* the chunks this call took, the oldest first */
  long cf_value = 0;                            /* what the last activation returned */
  unsigned long cf_sum = 0;                     /* what this activation's value is still to be added to */
  for (;;) { /* around the loop of activations: a chunk taken, or the call's end */
    for (;;) {
    cf_top:; /* an activation from its top: a new one, or one going on as a call its return adds to */
      {
        if (n <= 2) {
          {
            cf_value = n == 0 ? 0 : 1;
            goto cf_return;
          }
        }
        long cf_r1;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 1;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_cf_sum[cf_depth] = cf_sum;
            cf_s_resume_at[cf_depth] = 1;
            ++cf_depth;
            n = cf_a0;
            cf_sum = 0;
            goto cf_call;
          }
        }
        cf_r1 = cf_value;
        long x = cf_r1;
        long cf_r2;
        { /* a call of 'fib' its return adds to: the activation goes on as the call */
          long cf_a0 = n - 2;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_sum += (unsigned long)(x);
            n = cf_a0;
            goto cf_top; /* no frame pushed: none to spill */
          }
        }
        cf_r2 = cf_value;
        long y = cf_r2;
        (void)0 /* cilk_sync: its children have returned */;
        {
          cf_value = x + y;
          goto cf_return;
        }
      }
      goto cf_return; /* below: the copy the calls resume in */
      {
        if (n <= 2) {
          {
            cf_value = n == 0 ? 0 : 1;
            goto cf_return;
          }
        }
        long cf_r1;
        { /* a call of 'fib': a new activation on the stack */
          long cf_a0 = n - 1;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_s_n[cf_depth] = n;
            cf_s_cf_sum[cf_depth] = cf_sum;
            cf_s_resume_at[cf_depth] = 1;
            ++cf_depth;
            n = cf_a0;
            cf_sum = 0;
            goto cf_call;
          cf_resume_1:;
            n = cf_s_n[cf_depth];
            cf_sum = cf_s_cf_sum[cf_depth];
          }
        }
        cf_r1 = cf_value;
        long x = cf_r1;
        long cf_r2;
        { /* a call of 'fib' its return adds to: the activation goes on as the call */
          long cf_a0 = n - 2;
          if (cf_a0 <= 2) { /* 'fib' returns at once: it opens with this guard */
            cf_value = cf_a0 == 0 ? 0 : 1;
          } else {
            cf_sum += (unsigned long)(x);
            n = cf_a0;
            goto cf_top; /* no frame pushed: none to spill */
          }
        }
        cf_r2 = cf_value;
        long y = cf_r2;
        (void)0 /* cilk_sync: its children have returned */;
        {
          cf_value = x + y;
          goto cf_return;
        }
      }
    cf_return:
      cf_value = (long)((unsigned long)cf_value + cf_sum);
      if (cf_depth == 0) {
        if (!cf_spilled)
          break;
        /* the newest chunk's frames back from the device heap */
        for (uint cf_k = 0; cf_k < 32u; ++cf_k) {
          cf_s_n[cf_k] = cf_spilled->n[cf_k];
          cf_s_cf_sum[cf_k] = cf_spilled->cf_sum[cf_k];
          cf_s_resume_at[cf_k] = cf_spilled->resume_at[cf_k];
        }
        cf_spilled = cf_spilled->cf_below;
        cf_depth = 32u;
      }
      --cf_depth;
      goto cf_resume_1;
    cf_call:
      if (cf_depth == 64u)
        break;
    }
    if (cf_depth == 64u) {
      /* the private frames are full: the older half to the device heap */
      __global fib__serial__frames *cf_chunk = cf_spilled ? cf_spilled->cf_above : cf_chunks;
      if (!cf_chunk) {
        cf_chunk = (__global fib__serial__frames *)chanflow_stack_chunk(cf_env, sizeof(fib__serial__frames));
        if (!cf_chunk) { /* the depth reached: these frames and the spilled ones */
          uint cf_deep = 64u;
          for (__global fib__serial__frames *cf_c = cf_spilled; cf_c; cf_c = cf_c->cf_below)
            cf_deep += 32u;
          chanflow_report(cf_env, CHANFLOW_ERR_HELPER_STACK, cf_deep, 0u);
          return cf_value;
        }
        cf_chunk->cf_below = cf_spilled;
        cf_chunk->cf_above = 0;
        if (cf_spilled)
          cf_spilled->cf_above = cf_chunk;
        else
          cf_chunks = cf_chunk;
      }
      for (uint cf_k = 0; cf_k < 32u; ++cf_k) {
        cf_chunk->n[cf_k] = cf_s_n[cf_k];
        cf_s_n[cf_k] = cf_s_n[cf_k + 32u];
        cf_chunk->cf_sum[cf_k] = cf_s_cf_sum[cf_k];
        cf_s_cf_sum[cf_k] = cf_s_cf_sum[cf_k + 32u];
        cf_chunk->resume_at[cf_k] = cf_s_resume_at[cf_k];
        cf_s_resume_at[cf_k] = cf_s_resume_at[cf_k + 32u];
      }
      cf_spilled = cf_chunk;
      cf_depth = 32u;
    } else {
      while (cf_chunks) { /* the chunks back to the device heap */
        __global void *cf_chunk = cf_chunks;
        cf_chunks = cf_chunks->cf_above;
        chanflow_free(cf_env, cf_chunk);
      }
      return cf_value;
    }
  }
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  chanflow_node_env e;
  for (int r = 0; r < 7; ++r) {
    double t0 = now(); long a = fib_pushing(&e, n); double t1 = now(); long b = fib__serial(&e, n); double t2 = now();
    printf("fib(%ld) = %ld / %ld: both calls pushed %.3f ms, the summed call going on %.3f ms\n", n, a, b, t1 - t0, t2 - t1);
  }
  return 0;
}
