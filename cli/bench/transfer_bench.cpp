// Host-device copies by kind of host memory and direction (transfer_bench.hpp).
#include "transfer_bench.hpp"

#include "chanflow/pinned.hpp"
#include "common/bench_common.hpp"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>

namespace chanflow::bench {
namespace {

// A source pattern that differs in every word and from one size to the next.
void fill(unsigned char* p, std::size_t bytes, std::uint32_t salt) {
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
    const std::uint32_t w = static_cast<std::uint32_t>(i / 4) * 2654435761u + salt;
    std::memcpy(p + i, &w, 4);
  }
}

// Host memory of one kind: a vector's, or a pinned buffer's (of `owner`'s context).
struct HostMemory {
  std::vector<unsigned char> pageable;
  PinnedBuffer pinned;
  unsigned char* get() { return pinned.get() ? static_cast<unsigned char*>(pinned.get()) : pageable.data(); }
};

HostMemory host_memory(const Runtime* owner, std::size_t bytes) {
  HostMemory m;
  if (owner)
    m.pinned = PinnedBuffer(*owner, bytes);
  else
    m.pageable.resize(bytes);
  return m;
}

}  // namespace

nlohmann::json run_transfer_bench(const Runtime& rt, const TransferBenchOptions& o, std::FILE* table) {
  // A second context on the same device: its pinned memory, used by the first's queue, is what a
  // staging buffer of one device's context is to another device's copies; its queue copies the
  // other way at once.
  const Runtime other(DeviceSelection{.spec = std::to_string(rt.caps().index), .profiling = false});
  fmt::print(table, "Copies between the host and {} ({}), median of {}\n", rt.caps().name, rt.caps().platform, o.reps);
  fmt::print(table, "{:>8} {:<22} {:<14} {:>10} {:>10} {:>8}\n", "MiB", "host memory", "direction", "median ms", "GB/s", "ok");
  nlohmann::json rows = nlohmann::json::array();
  const struct {
    const char* name;
    const Runtime* owner;
  } kinds[] = {{"pageable", nullptr}, {"pinned", &rt}, {"pinned, other context", &other}};
  for (std::uint32_t mib : o.mib) {
    const std::size_t bytes = std::size_t{mib} << 20;
    SvmBuffer device(rt, bytes), device2(other, bytes);
    for (const auto& kind : kinds) {
      HostMemory src = host_memory(kind.owner, bytes), dst = host_memory(kind.owner, bytes);
      fill(src.get(), bytes, mib);
      // Both at once: to the device on this context's queue, to the host on the other's.
      HostMemory back = host_memory(kind.owner, bytes);
      other.svm_write(device2.get(), src.get(), bytes);
      const char* const directions[] = {"to device", "to host", "both at once"};
      for (int dir = 0; dir < 3; ++dir) {
        std::memset(dst.get(), 0, bytes);
        std::memset(back.get(), 0, bytes);
        std::vector<double> ms;
        for (unsigned r = 0; r < o.reps; ++r) {
          const auto start = Clock::now();
          if (dir == 0) {
            rt.svm_write(device.get(), src.get(), bytes);
          } else if (dir == 1) {
            rt.svm_read(dst.get(), device.get(), bytes);
          } else {
            rt.svm_write_async(device.get(), src.get(), bytes);
            other.svm_read_async(back.get(), device2.get(), bytes);
            rt.finish();
            other.finish();
          }
          ms.push_back(ms_since(start));
        }
        // What went to a device is read back (untimed); what came to the host is compared.
        if (dir == 0) rt.svm_read(dst.get(), device.get(), bytes);
        const bool ok = std::memcmp(dir == 2 ? back.get() : dst.get(), src.get(), bytes) == 0;
        const Summary s = summarize(ms);
        const double gbs = (dir == 2 ? 2.0 : 1.0) * static_cast<double>(bytes) / (s.median * 1e6);
        fmt::print(table, "{:>8} {:<22} {:<14} {:>10.3f} {:>10.2f} {:>8}\n", mib, kind.name, directions[dir], s.median,
                   gbs, ok ? "yes" : "NO");
        std::fflush(table);
        rows.push_back({{"workload", "transfers"}, {"impl", "opencl"}, {"mib", mib}, {"memory", kind.name},
                        {"direction", directions[dir]}, {"reps", o.reps}, {"median_ms", s.median}, {"min_ms", s.min},
                        {"max_ms", s.max}, {"gb_per_s", gbs}, {"correct", ok}});
      }
    }
  }
  // One small copy each way, blocking: the latency a move of a few CEs pays.
  std::uint32_t word = 0x5eed, got = 0;
  SvmBuffer cell(rt, sizeof word);
  std::vector<double> us;
  for (unsigned r = 0; r < 20 * o.reps; ++r) {
    const auto start = Clock::now();
    rt.svm_write(cell.get(), &word, sizeof word);
    rt.svm_read(&got, cell.get(), sizeof got);
    us.push_back(1e3 * ms_since(start) / 2);
  }
  const Summary s = summarize(us);
  fmt::print(table, "one 4-byte copy (blocking, either way): median {:.1f} µs, least {:.1f}\n", s.median, s.min);
  rows.push_back({{"workload", "transfers"}, {"impl", "opencl"}, {"bytes", sizeof word}, {"direction", "small copy"},
                  {"median_us", s.median}, {"min_us", s.min}, {"correct", got == word}});
  return rows;
}

}  // namespace chanflow::bench
