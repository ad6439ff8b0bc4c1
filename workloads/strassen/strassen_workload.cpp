// Strassen (float and double) as workloads of `chanflow run` and `chanflow bench`.
#include "strassen.hpp"

#include "peers/gpu_peers.hpp"
#include "strassen/strassen_across.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace chanflow::workloads {

// Higham, Accuracy and Stability of Numerical Algorithms (2nd ed., 2002), Theorem 23.3: Strassen
// recursing down to order n0 and multiplying by the definition there computes Ĉ with
//   max|C - Ĉ| <= [(n/n0)^log2(12) (n0² + 5 n0) - 5n] u max|A| max|B| + O(u²).
// The bound holds for any order of the additions, so also for the atomic combination; the
// definition's own bound (n² u, normwise) is below it, so one bound serves every implementation.
double strassen_error_bound(std::uint64_t n, std::uint32_t base, double unit_roundoff) {
  const double n0 = std::min<double>(static_cast<double>(n), base);
  const double levels = std::log2(static_cast<double>(n) / n0);
  const double factor = std::pow(12.0, levels) * (n0 * n0 + 5 * n0) - 5.0 * static_cast<double>(n);
  return std::max(factor, static_cast<double>(n) * static_cast<double>(n)) * unit_roundoff;
}

namespace {

template <class Real>
struct Traits;
template <>
struct Traits<float> {
  using Wide = double;  // the reference's type
  static constexpr Precision precision = Precision::F32;
  static constexpr const char* name = "strassen";
  static void serial(long n, const float* a, const float* b, float* c) { strassen_multiply_f32(n, a, b, c); }
};
template <>
struct Traits<double> {
  using Wide = long double;
  static constexpr Precision precision = Precision::F64;
  static constexpr const char* name = "strassen-f64";
  static void serial(long n, const double* a, const double* b, double* c) { strassen_multiply_f64(n, a, b, c); }
};

template <class Real>
class StrassenInstance final : public Instance {
  using Wide = typename Traits<Real>::Wide;

 public:
  StrassenInstance(const Runtime& runtime, std::uint64_t n, std::uint64_t seed, const RunSettings& settings)
      : runtime_(runtime), n_(n), settings_(settings), a_(n * n), b_(n * n), c_(n * n), reference_(n * n),
        a_svm_(runtime, n * n * sizeof(Real)), b_svm_(runtime, n * n * sizeof(Real)),
        c_svm_(runtime, n * n * sizeof(Real)) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<Real> uniform(Real(-1), Real(1));
    for (auto& x : a_) x = uniform(gen);
    for (auto& x : b_) x = uniform(gen);
    gemm_reference<Real, Wide>(n, a_.data(), b_.data(), reference_.data());
    scale_ = static_cast<double>(max_abs(a_)) * static_cast<double>(max_abs(b_));
    bound_ = strassen_error_bound(n, kStrassenBase, std::numeric_limits<Real>::epsilon() / 2);
    runtime.svm_write(a_svm_.get(), a_.data(), n * n * sizeof(Real));
    runtime.svm_write(b_svm_.get(), b_.data(), n * n * sizeof(Real));
  }
  // The compiled program's graphs were kept for this runtime, and name this instance's matrices.
  ~StrassenInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    const Real* a = a_.data();
    const Real* b = b_.data();
    // Every implementation starts from NaN, so an element nobody wrote fails the check.
    std::fill(c_.begin(), c_.end(), std::numeric_limits<Real>::quiet_NaN());
    Real* c = c_.data();
    keep_graph_of(impl);
    if (impl == "chanflow" && !settings_.devices.empty()) {
      // Across devices: a share of the products per device, their Cs summed band by band.
      if (!across_) across_ = std::make_unique<StrassenAcrossDevices<Real>>(settings_, runtime_.profiling(), n_, a_, b_);
      across_->measure(m, c_);
    } else if (impl == "chanflow" || impl == "chanflow-join") {
      m.threads = 0;
      runtime_.svm_write(c_svm_.get(), c_.data(), n_ * n_ * sizeof(Real));
      const auto policy = settings_.make_policy();
      RunStats stats;
      const StrassenCombine combine = impl == "chanflow" ? StrassenCombine::Atomic : StrassenCombine::Join;
      auto& graph = combine == StrassenCombine::Atomic ? atomic_ : joined_;
      m.ms = time_ms([&] {  // the first run builds the graph, later ones reuse it
        if (!graph)
          graph = std::make_unique<StrassenCilk>(runtime_, a_svm_, b_svm_, c_svm_, n_, Traits<Real>::precision,
                                                 settings_.for_device(runtime_.caps(), strassen_footprint(n_)), combine);
        stats = graph->run(*policy, settings_.run_options(fmt::format("strassen {}", n_)));
      });
      runtime_.svm_read(c_.data(), c_svm_.get(), n_ * n_ * sizeof(Real));
      m.stats = std::move(stats);
    } else if (impl == "chanflow-compiled" && Traits<Real>::precision == Precision::F32) {
      m.threads = 0;
      runtime_.svm_write(c_svm_.get(), c_.data(), n_ * n_ * sizeof(Real));
      RunSettings compiled = cilk::settings_for(settings_, runtime_.caps(), strassen_footprint(n_));
      compiled.heap_bytes = std::max(compiled.heap_bytes, strassen_compiled_heap_bytes(n_));
      RunStats stats;
      m.ms = time_ms([&] { stats = strassen_compiled(runtime_, a_svm_, b_svm_, c_svm_, n_, compiled, settings_.capacity != 0);
      });
      runtime_.svm_read(c_.data(), c_svm_.get(), n_ * n_ * sizeof(Real));
      m.stats = std::move(stats);
    } else if (impl == "serial") {
      m.ms = time_ms([&] { Traits<Real>::serial(static_cast<long>(n_), a, b, c); });
    } else if (impl == "gemm-blocked") {
      m.ms = time_ms([&] { gemm_blocked<Real>(n_, a, b, c); });
    } else if (impl == "clblast-gemm" && have_clblast()) {
      m.threads = 0;
      if (!peer_) peer_ = std::make_unique<ClblastGemm<Real>>(runtime_, n_);
      m.ms = peer_->run(a, b, c);
    } else {
      m.threads = tbb_threads();
      if (impl == "tbb-fine")
        m.ms = time_ms([&] { strassen_tbb_fine<Real>(n_, a, b, c); });
      else if (impl == "tbb-cutoff")
        m.ms = time_ms([&] { strassen_tbb_cutoff<Real>(n_, a, b, c); });
      else
        throw std::invalid_argument(fmt::format("{} has no implementation '{}'", Traits<Real>::name, impl));
    }
    double worst = 0;
    for (std::size_t i = 0; i < c_.size(); ++i) {
      const double e = static_cast<double>(std::fabs(static_cast<Wide>(c_[i]) - reference_[i]));
      if (!(e <= worst)) worst = e;  // NaN sticks
    }
    const double error = worst / scale_;
    m.correct = error <= bound_;
    m.result = fmt::format("{}({}): max error {:.2g} max|A| max|B|, bound {:.2g}{}", Traits<Real>::name, n_, error,
                           bound_, m.correct ? "" : ": WRONG");
    return m;
  }

 private:
  // Each graph is kept across the runs of its implementation; the others' are dropped first: at the
  // GPU sizes their channels and temporaries would not leave room (strassen-f64 4096 with joins
  // allocates 20 GB of frame scratch).
  void keep_graph_of(std::string_view impl) {
    if (impl != "chanflow") {
      atomic_.reset();
      across_.reset();
    }
    if (impl != "chanflow-join") joined_.reset();
    if (impl != "chanflow-compiled") cilk::forget(runtime_);
  }
  static Real max_abs(const std::vector<Real>& v) {
    Real m = 0;
    for (Real x : v) m = std::max(m, std::fabs(x));
    return m;
  }
  const Runtime& runtime_;
  std::uint64_t n_;
  RunSettings settings_;
  std::vector<Real> a_, b_, c_;
  std::vector<Wide> reference_;
  double scale_ = 1, bound_ = 0;
  SvmBuffer a_svm_, b_svm_, c_svm_;
  std::unique_ptr<StrassenCilk> atomic_, joined_;  // after the buffers they name: they go first
  std::unique_ptr<ClblastGemm<Real>> peer_;
  std::unique_ptr<StrassenAcrossDevices<Real>> across_;
};

template <class Real>
class Strassen final : public Workload {
 public:
  std::string_view name() const override { return Traits<Real>::name; }
  std::string_view size_name() const override { return "n"; }
  std::vector<std::string> impls() const override {
    std::vector<std::string> impls{"serial", "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-join", "gemm-blocked"};
    if (Traits<Real>::precision == Precision::F32) impls.emplace_back("chanflow-compiled");  // strassen.c, REAL float
    if (have_clblast()) impls.emplace_back("clblast-gemm");  // CLBlast's GEMM on the same device
    return impls;
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {512};
    if (set == SizeSet::Gpu) return {2048, 4096};
    if (Traits<Real>::precision == Precision::F64) return {128, 256, 512, 1024};
    return {128, 256, 512, 1024, 2048};
  }
  void check_size(std::uint64_t n, const DeviceCaps& caps, const RunSettings& settings) const override {
    const auto name = Traits<Real>::name;
    if (n == 0 || (n & (n - 1)) != 0)
      throw std::invalid_argument(fmt::format("{} {}: n must be a power of two (1, 2, 4, ...)", name, n));
    constexpr std::uint64_t kMaxOrder = 1u << 14;  // 7^9 tasks, 3 GiB of float matrices
    if (n > kMaxOrder) throw std::invalid_argument(fmt::format("{} {}: n is at most {}", name, n, kMaxOrder));
    if (Traits<Real>::precision == Precision::F64 && !caps.fp64)
      throw std::invalid_argument(fmt::format("{} {}: '{}' has no double precision (cl_khr_fp64)", name, n, caps.name));
    const std::uint64_t matrix = n * n * sizeof(Real);
    if (caps.max_alloc_bytes && matrix > caps.max_alloc_bytes)
      throw std::invalid_argument(fmt::format("{} {}: a {:.0f} MiB matrix exceeds the device's largest allocation "
                                              "({:.0f} MiB)",
                                              name, n, matrix / 1048576.0, caps.max_alloc_bytes / 1048576.0));
    const std::uint32_t capacity = settings.for_device(caps, strassen_footprint(n)).capacity;
    const std::uint64_t scratch = strassen_scratch_bytes(n, Traits<Real>::precision, capacity);
    if (caps.global_mem_bytes && 3 * matrix + scratch > caps.global_mem_bytes / 2)
      throw std::invalid_argument(fmt::format("{} {}: A, B, C and the temporaries ({:.0f} MiB at {} frames per level) "
                                              "need more than half the device's memory ({:.0f} MiB); a smaller "
                                              "--capacity needs less",
                                              name, n, (3 * matrix + scratch) / 1048576.0, capacity,
                                              caps.global_mem_bytes / 1048576.0));
  }
  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t seed,
                                    const RunSettings& settings) const override {
    return std::make_unique<StrassenInstance<Real>>(runtime, size, seed, settings);
  }
  bool runs_across_devices(std::string_view impl) const override { return impl == "chanflow"; }
};

}  // namespace

const Workload& strassen_workload() {
  static const Strassen<float> w;
  return w;
}

const Workload& strassen_f64_workload() {
  static const Strassen<double> w;
  return w;
}

}  // namespace chanflow::workloads
