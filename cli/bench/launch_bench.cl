/* `chanflow bench launch`: a kernel that does almost nothing, so a launch's cost is what is
 * measured; it counts its launches so the benchmark can check that every one ran. */
__kernel void chanflow_count_launch(__global uint* launches) {
  if (get_global_id(0) == 0) launches[0] += 1u;
}

/* The memory table: one word per 4 KiB page of a fresh allocation, written by its own work-item
 * (a first touch: on some drivers that is where pages are really made). */
__kernel void chanflow_touch_pages(__global uint* memory, ulong pages) {
  const size_t page = get_global_id(0);
  if (page < pages) memory[page * 1024] = (uint)page + 1u;
}
