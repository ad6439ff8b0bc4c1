/* `chanflow bench launch`: a kernel that does almost nothing, so a launch's cost is what is
 * measured; it counts its launches so the benchmark can check that every one ran. */
__kernel void chanflow_count_launch(__global uint* launches) {
  if (get_global_id(0) == 0) launches[0] += 1u;
}
