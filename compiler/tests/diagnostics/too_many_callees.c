/* A Cilk function's node has at most 32 output ports, one per function it spawns or calls and its
 * continuation: one that spawns 32 different functions is rejected where it is defined, not when
 * its graph is checked at run time. */
#include <cilk/cilk.h>

#define PART(k) \
  long part##k(long n) { return n * (k + 1); }

PART(0)
PART(1)
PART(2)
PART(3)
PART(4)
PART(5)
PART(6)
PART(7)
PART(8)
PART(9)
PART(10)
PART(11)
PART(12)
PART(13)
PART(14)
PART(15)
PART(16)
PART(17)
PART(18)
PART(19)
PART(20)
PART(21)
PART(22)
PART(23)
PART(24)
PART(25)
PART(26)
PART(27)
PART(28)
PART(29)
PART(30)
PART(31)

long all(long n) {
  long r[32];
  r[0] = cilk_spawn part0(n);
  r[1] = cilk_spawn part1(n);
  r[2] = cilk_spawn part2(n);
  r[3] = cilk_spawn part3(n);
  r[4] = cilk_spawn part4(n);
  r[5] = cilk_spawn part5(n);
  r[6] = cilk_spawn part6(n);
  r[7] = cilk_spawn part7(n);
  r[8] = cilk_spawn part8(n);
  r[9] = cilk_spawn part9(n);
  r[10] = cilk_spawn part10(n);
  r[11] = cilk_spawn part11(n);
  r[12] = cilk_spawn part12(n);
  r[13] = cilk_spawn part13(n);
  r[14] = cilk_spawn part14(n);
  r[15] = cilk_spawn part15(n);
  r[16] = cilk_spawn part16(n);
  r[17] = cilk_spawn part17(n);
  r[18] = cilk_spawn part18(n);
  r[19] = cilk_spawn part19(n);
  r[20] = cilk_spawn part20(n);
  r[21] = cilk_spawn part21(n);
  r[22] = cilk_spawn part22(n);
  r[23] = cilk_spawn part23(n);
  r[24] = cilk_spawn part24(n);
  r[25] = cilk_spawn part25(n);
  r[26] = cilk_spawn part26(n);
  r[27] = cilk_spawn part27(n);
  r[28] = cilk_spawn part28(n);
  r[29] = cilk_spawn part29(n);
  r[30] = cilk_spawn part30(n);
  r[31] = cilk_spawn part31(n);
  cilk_sync;
  long s = 0;
  for (int k = 0; k < 32; k++) s += r[k];
  return s;
}

int main(void) { return (int)(all(1) % 7); }
