/* Strassen across devices (strassen_across.hpp): the other devices' parts of one band of C, laid
 * one after another in `others`, added into this device's band. REAL is defined by the build. */
__kernel void strassen_sum_band(__global REAL* band, __global const REAL* others, ulong count, uint parts) {
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
    REAL v = band[i];
    for (uint p = 0; p < parts; ++p) v += others[p * count + i];
    band[i] = v;
  }
}
