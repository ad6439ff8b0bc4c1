// The devices a run spans (multidevice/, device_set.hpp): a spec chooses them as a user writes it,
// and every spec that cannot run is refused before anything runs, naming the device and why; the
// chosen devices each get a runtime of their own, and graphs run on all of them at once from host
// threads of their own, each one right. ctest runs this suite on the default device and again on
// PoCL presenting the CPU as three devices (POCL_DEVICES).
#include "chanflow/chanflow.hpp"
#include "chanflow/device_set.hpp"
#include "chanflow/work_router.hpp"
#include "common/workload.hpp"
#include "fib/fib.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace chanflow;

namespace {

DeviceCaps device(unsigned index, std::string name, std::string platform, cl_device_type type, std::string vendor = "") {
  DeviceCaps d;
  d.index = index;
  d.name = std::move(name);
  d.platform = std::move(platform);
  d.vendor = std::move(vendor);
  d.type = type;
  d.svm_coarse = true;
  d.int64_atomics = true;
  d.address_bits = 64;
  return d;
}

// A host of four H100s beside PoCL's CPU device and an older GPU.
std::vector<DeviceCaps> host() {
  std::vector<DeviceCaps> listed{device(0, "pthread-haswell", "Portable Computing Language", CL_DEVICE_TYPE_CPU, "AuthenticAMD")};
  for (unsigned i = 1; i <= 4; ++i) {
    listed.push_back(device(i, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA", CL_DEVICE_TYPE_GPU, "NVIDIA Corporation"));
    listed.back().nv_compute_major = 9;
  }
  listed.push_back(device(5, "Tesla P100", "NVIDIA CUDA", CL_DEVICE_TYPE_GPU, "NVIDIA Corporation"));
  listed.back().nv_compute_major = 6;  // no PTX release/acquire
  return listed;
}

std::vector<unsigned> indices(const std::vector<DeviceCaps>& chosen) {
  std::vector<unsigned> out;
  for (const auto& d : chosen) out.push_back(d.index);
  return out;
}

}  // namespace

TEST_SUITE("devices") {

TEST_CASE("Device sets: a spec names devices by index, range, name part or 'all', in the order named") {
  const auto listed = host();
  CHECK(indices(choose_devices("all", listed)) == std::vector<unsigned>{1, 2, 3, 4});  // the GPUs that can take part
  CHECK(indices(choose_devices(" ALL ", listed)) == std::vector<unsigned>{1, 2, 3, 4});
  CHECK(indices(choose_devices("2,1", listed)) == std::vector<unsigned>{2, 1});
  CHECK(indices(choose_devices("1-3", listed)) == std::vector<unsigned>{1, 2, 3});
  CHECK(indices(choose_devices("4, 1 - 2", listed)) == std::vector<unsigned>{4, 1, 2});
  CHECK(indices(choose_devices("h100", listed)) == std::vector<unsigned>{1, 2, 3, 4});
  CHECK(indices(choose_devices("0", listed)) == std::vector<unsigned>{0});
  CHECK(indices(choose_devices("pthread", listed)) == std::vector<unsigned>{0});
  // One device runs as it always has: an older GPU alone is not asked for device-scope order.
  CHECK(indices(choose_devices("5", listed)) == std::vector<unsigned>{5});
  // Without a GPU that can take part, "all" is PoCL's CPU devices.
  std::vector<DeviceCaps> cpus{device(0, "pthread-a", "Portable Computing Language", CL_DEVICE_TYPE_CPU),
                               device(1, "pthread-b", "Portable Computing Language", CL_DEVICE_TYPE_CPU)};
  CHECK(indices(choose_devices("all", cpus)) == std::vector<unsigned>{0, 1});
}

TEST_CASE("Device sets: a spec that cannot run is refused before the run, naming the device and why") {
  const auto listed = host();
  CHECK_THROWS_WITH_AS(choose_devices("", listed), doctest::Contains("no device named"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("7", listed), doctest::Contains("there is no device 7; this machine lists 6"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("1,,2", listed), doctest::Contains("an empty item"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("3-1", listed), doctest::Contains("the range 3-1 runs backwards"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("2-9", listed), doctest::Contains("there is no device 6"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("radeon", listed), doctest::Contains("no device matches 'radeon'"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("1,0-2", listed), doctest::Contains("names device [1] NVIDIA H100 80GB HBM3 twice"),
                       DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("0,1", listed),
                       doctest::Contains("[0] pthread-haswell (Portable Computing Language) and [1] NVIDIA H100 80GB HBM3 "
                                         "(NVIDIA CUDA) are of different platforms"),
                       DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("1,5", listed),
                       doctest::Contains("[5] Tesla P100 cannot take part in a run across devices; it lacks:\n  - device-scope store order"),
                       DeviceSetError);
  auto no_svm = listed;
  no_svm[2].svm_coarse = false;
  CHECK_THROWS_WITH_AS(choose_devices("2", no_svm), doctest::Contains("[2] NVIDIA H100 80GB HBM3 cannot take part; it lacks:\n  - coarse-grain SVM"),
                       DeviceSetError);
  CHECK(indices(choose_devices("all", no_svm)) == std::vector<unsigned>{1, 3, 4});  // "all" leaves it out
  std::vector<DeviceCaps> none{listed[5]};
  none[0].index = 0;
  CHECK_THROWS_WITH_AS(choose_devices("all", none), doctest::Contains("no device can take part"), DeviceSetError);
  CHECK_THROWS_WITH_AS(choose_devices("all", {}), doctest::Contains("lists no OpenCL device"), DeviceSetError);
}

TEST_CASE("Device sets: the devices that can run together, by platform") {
  const auto groups = device_groups(host());
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].platform == "Portable Computing Language");
  CHECK(groups[0].indices == std::vector<unsigned>{0});
  CHECK(groups[1].platform == "NVIDIA CUDA");
  CHECK(groups[1].indices == std::vector<unsigned>{1, 2, 3, 4});  // not the P100
}

TEST_CASE("Device sets: every device of 'all' gets a runtime of its own, and graphs run on all of them at once, each right" *
          doctest::timeout(900)) {
  const DeviceSet set("all");
  MESSAGE(set.describe());
  REQUIRE(set.size() >= 1);
  CHECK(set.describe().starts_with(std::to_string(set.size()) + " device"));
  for (std::size_t i = 0; i < set.size(); ++i) {
    CHECK(multi_device_missing(set.caps(i)).empty());
    for (std::size_t j = 0; j < i; ++j) CHECK(&set.runtime(i) != &set.runtime(j));
  }
  // A fib per device, each from a host thread of its own, at once.
  std::vector<std::uint64_t> got(set.size());
  std::vector<std::string> errors(set.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < set.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        Levelized levelized;
        const std::uint32_t n = 16 + static_cast<std::uint32_t>(i);
        got[i] = workloads::fib_cilk(set.runtime(i), n, levelized, RunSettings{.capacity = 1u << 12, .wg_size = 16,
                                                                               .scheduler = Scheduler::Rounds})
                     .value;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < set.size(); ++i) {
    CAPTURE(i);
    CHECK(errors[i] == "");
    CHECK(got[i] == workloads::fib_serial(16 + static_cast<std::uint32_t>(i)));
  }
}

namespace {

// Fib's hand-built graph on every device of `set` under `scheduler`, run for each n (the same
// graphs again: each run's tasks and results move afresh), each result checked, and every
// device's traffic against the others'.
void fib_across(const DeviceSet& set, Scheduler scheduler, std::initializer_list<std::uint32_t> ns) {
  std::vector<std::unique_ptr<workloads::FibCilk>> fibs;
  std::vector<DeviceGraph> graphs;
  for (std::size_t i = 0; i < set.size(); ++i) {
    fibs.push_back(std::make_unique<workloads::FibCilk>(
        set.runtime(i), RunSettings{.capacity = 1u << 12, .wg_size = 16, .dispatch = Sweeps::Off, .scheduler = scheduler}));
    graphs.push_back({&fibs.back()->graph(), {"fib"}});
  }
  WorkRouter router(std::move(graphs));
  for (const std::uint32_t n : ns) {
    CAPTURE(n);
    fibs[0]->seed(n);
    const DeviceRunStats stats = router.run([] { return std::make_unique<Levelized>(); });
    for (std::size_t d = 0; d < stats.traffic.size(); ++d)
      MESSAGE("fib(" << n << ") device " << d << " (" << stats.runs[d].scheduler << "): " << stats.runs[d].ces
                     << " CEs run, " << stats.traffic[d].tasks_sent << " tasks sent in " << stats.traffic[d].batches_sent
                     << " batches, " << stats.traffic[d].tasks_received << " received, " << stats.traffic[d].waits
                     << " waits, " << stats.traffic[d].recalls << " launches recalled");
    CHECK(fibs[0]->result() == workloads::fib_serial(n));
    REQUIRE(stats.traffic.size() == set.size());
    std::uint64_t sent = 0, received = 0;
    for (std::size_t d = 0; d < set.size(); ++d) {
      CAPTURE(d);
      const DeviceTraffic& t = stats.traffic[d];
      CHECK(stats.runs[d].scheduler == (scheduler == Scheduler::Device ? "device" : "rounds"));
      CHECK(stats.runs[d].device_scheduler.recalled <= t.recalls);  // a launch ends recalled only when asked
      sent += t.tasks_sent;
      received += t.tasks_received;
      CHECK(t.returns_sent == t.tasks_received);  // every task a device was given returned its result
      if (n >= 15 && set.size() > 1) CHECK(t.tasks_received + t.tasks_sent > 0);  // every device took part
    }
    CHECK(sent == received);
    if (set.size() == 1) CHECK(sent == 0);
  }
}

}  // namespace

TEST_CASE("A run across devices: fib's tasks move to the devices that run dry, and every result comes back to its frame" *
          doctest::timeout(900)) {
  const DeviceSet set("all");
  MESSAGE(set.describe());
  fib_across(set, Scheduler::Rounds, {1u, 15u, 20u});
}

TEST_CASE("A run across devices under the device scheduler: a device that waits recalls the others' launches, and "
          "their tasks move to it" *
          doctest::timeout(900)) {
  const DeviceSet set("all");
  MESSAGE(set.describe());
  for (std::size_t i = 0; i < set.size(); ++i)
    if (!device_scheduler_holds(set.caps(i))) return;  // refused for such a device: its own suite says so
  fib_across(set, Scheduler::Device, {15u, 20u});
}

TEST_CASE("A run across devices writes a trace per device, each holding that device's dispatches") {
  const DeviceSet set("all", /*profiling=*/true);
  std::vector<std::unique_ptr<workloads::FibCilk>> fibs;
  std::vector<DeviceGraph> graphs;
  for (std::size_t i = 0; i < set.size(); ++i) {
    fibs.push_back(std::make_unique<workloads::FibCilk>(
        set.runtime(i), RunSettings{.capacity = 1u << 12, .wg_size = 16, .dispatch = Sweeps::Off, .scheduler = Scheduler::Rounds}));
    graphs.push_back({&fibs.back()->graph(), {"fib"}});
  }
  WorkRouter router(std::move(graphs));
  fibs[0]->seed(16);
  // A name of this process's own: ctest runs this suite in several tests at once.
  const auto path = std::filesystem::temp_directory_path() / fmt::format("chanflow-test-across-{}.json", ::getpid());
  const DeviceRunStats stats = router.run([] { return std::make_unique<Levelized>(); }, {.trace_path = path.string()});
  CHECK(fibs[0]->result() == workloads::fib_serial(16));
  for (std::size_t d = 0; d < set.size(); ++d) {
    CAPTURE(d);
    const std::string file = device_trace_path(path.string(), d);
    std::ifstream in(file);
    REQUIRE(in.good());
    const auto trace = nlohmann::json::parse(in);
    std::size_t kernel_spans = 0;
    for (const auto& e : trace.at("traceEvents"))
      if (e.at("ph") == "X" && e.at("tid").get<int>() > 0) ++kernel_spans;
    CHECK(kernel_spans == stats.runs[d].dispatches);
    std::filesystem::remove(file);
  }
}

TEST_CASE("A run across devices: every workload that can runs across all of them, twice, each result its serial one" *
          doctest::timeout(900)) {
  // A size each, small enough for PoCL as four devices on two cores; a workload that runs across
  // devices without one here fails the case, so none is left out. Sort and Strassen move their
  // data, not their tasks: the suite data_across runs them, as workloads too (each device of a set
  // builds its programs anew, so they are built for three devices there, not for two, three and four).
  const std::map<std::string_view, std::uint64_t> sizes{{"fib", 18}, {"queens", 10}, {"nqueens", 11}, {"uts", 100}};
  const std::set<std::string_view> data_across{"sort", "sort-u64", "strassen", "strassen-f64"};
  const DeviceSet set("all");
  const Runtime& first = set.runtime(0);
  for (const workloads::Workload* w : workloads::all_workloads())
    for (const auto& impl : w->impls()) {
      if (!w->runs_across_devices(impl) || data_across.count(w->name())) continue;
      CAPTURE(w->name());
      CAPTURE(impl);
      const auto size = sizes.find(w->name());
      REQUIRE_MESSAGE(size != sizes.end(), "no size to run this workload across devices at");
      RunSettings settings{.capacity = 1u << 12, .wg_size = 16};
      settings.devices = "all";
      const auto instance = w->prepare(first, size->second, 7, settings);
      for (int run = 0; run < 2; ++run) {  // the second reuses the devices' graphs
        CAPTURE(run);
        const workloads::Measurement m = instance->run(impl);
        MESSAGE(m.result);
        CHECK(m.correct);
        REQUIRE(m.across);
        CHECK(m.across->runs.size() == set.size());
        std::uint64_t sent = 0, received = 0;
        for (const DeviceTraffic& t : m.across->traffic) {
          sent += t.tasks_sent;
          received += t.tasks_received;
          CHECK(t.returns_sent + t.plain_received == t.tasks_received);  // a plain channel's CE returns nothing
        }
        CHECK(sent == received);
        if (impl == "chanflow-static") CHECK(sent == 0);  // the split stays where it was placed
      }
    }
}

TEST_CASE("A run across devices is right under either policy at capacities that make tasks yield" * doctest::timeout(900)) {
  const DeviceSet set("all");
  for (const std::uint32_t capacity : {128u, 1024u}) {
    std::vector<std::unique_ptr<workloads::FibCilk>> fibs;
    std::vector<DeviceGraph> graphs;
    for (std::size_t i = 0; i < set.size(); ++i) {
      fibs.push_back(std::make_unique<workloads::FibCilk>(
          set.runtime(i), RunSettings{.capacity = capacity, .wg_size = 16, .dispatch = Sweeps::Off, .scheduler = Scheduler::Rounds}));
      graphs.push_back({&fibs.back()->graph(), {"fib"}});
    }
    WorkRouter router(std::move(graphs));
    for (const bool greedy : {false, true}) {
      CAPTURE(capacity);
      CAPTURE(greedy);
      fibs[0]->seed(18);
      const DeviceRunStats stats = router.run([greedy]() -> std::unique_ptr<SchedulingPolicy> {
        if (greedy) return std::make_unique<Greedy>();
        return std::make_unique<Levelized>();
      });
      CHECK(fibs[0]->result() == workloads::fib_serial(18));
      std::uint64_t yields = 0;
      for (const auto& r : stats.runs) yields += r.yields;
      if (capacity == 128) CHECK(yields > 0);  // the bounded case this runs is the one it means to
    }
  }
}

TEST_CASE("A run across devices, soaked: random roots, sizes, capacities, work-group sizes, policies and sweeps, every result right" *
          doctest::timeout(900)) {
  const DeviceSet set("all");
  std::mt19937 random(20261129);
  for (int config = 0; config < 12; ++config) {
    const std::uint32_t wg = 8u << (random() % 4);                       // 8 .. 64
    const std::uint32_t capacity = std::max(128u, wg * 4) << (random() % 4);  // a work-group's request and more
    const auto root = static_cast<std::size_t>(random() % set.size());
    const std::uint32_t n = 10 + random() % 10;
    const bool greedy = random() % 2;
    const Sweeps sweeps = std::array{Sweeps::Off, Sweeps::Planned, Sweeps::Claimed}[random() % 3];
    CAPTURE(config);
    CAPTURE(wg);
    CAPTURE(capacity);
    CAPTURE(root);
    CAPTURE(n);
    CAPTURE(greedy);
    CAPTURE(static_cast<int>(sweeps));
    std::vector<std::unique_ptr<workloads::FibCilk>> fibs;
    std::vector<DeviceGraph> graphs;
    for (std::size_t i = 0; i < set.size(); ++i) {
      fibs.push_back(std::make_unique<workloads::FibCilk>(
          set.runtime(i), RunSettings{.capacity = capacity, .wg_size = wg, .dispatch = sweeps, .scheduler = Scheduler::Rounds}));
      graphs.push_back({&fibs.back()->graph(), {"fib"}});
    }
    WorkRouter router(std::move(graphs));
    fibs[root]->seed(n);
    const DeviceRunStats stats = router.run([greedy]() -> std::unique_ptr<SchedulingPolicy> {
      if (greedy) return std::make_unique<Greedy>();
      return std::make_unique<Levelized>();
    });
    CHECK(fibs[root]->result() == workloads::fib_serial(n));
    std::uint64_t sent = 0, received = 0;
    for (const auto& t : stats.traffic) {
      sent += t.tasks_sent;
      received += t.tasks_received;
      CHECK(t.returns_sent == t.tasks_received);
    }
    CHECK(sent == received);
  }
}

TEST_CASE("A run across devices stops when one device's run fails, naming that device, and nothing hangs" *
          doctest::timeout(600)) {
  const DeviceSet set("all");
  if (set.size() < 2) {
    MESSAGE("one device: no other to fail beside it (ctest runs this suite on PoCL as 2-4 devices too)");
    return;
  }
  // Every device but the first has room for three levels of each stack: a task it is given grows
  // deeper than that, and its run fails there.
  std::vector<std::unique_ptr<workloads::FibCilk>> fibs;
  std::vector<DeviceGraph> graphs;
  for (std::size_t i = 0; i < set.size(); ++i) {
    fibs.push_back(std::make_unique<workloads::FibCilk>(
        set.runtime(i), RunSettings{.capacity = 1u << 12, .wg_size = 16, .dispatch = Sweeps::Off, .scheduler = Scheduler::Rounds,
                                    .max_channels = i == 0 ? 1024u : 6u}));
    graphs.push_back({&fibs.back()->graph(), {"fib"}});
  }
  WorkRouter router(std::move(graphs));
  fibs[0]->seed(20);
  try {
    router.run([] { return std::make_unique<Levelized>(); });
    FAIL("the run did not fail");
  } catch (const RunError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("device 0 (") == std::string::npos);  // the first to fail is named, not one it stopped
    CHECK(what.find("channel-table slots") != std::string::npos);
  }
}

TEST_CASE("A run across devices refuses graphs it cannot share, naming the device") {
  const DeviceSet set("all");
  workloads::FibCilk rounds(set.runtime(0), RunSettings{.capacity = 1u << 10, .wg_size = 16, .scheduler = Scheduler::Rounds});
  CHECK_THROWS_WITH_AS(WorkRouter({{&rounds.graph(), {"fibs"}}}), doctest::Contains("device 0: the graph has no channel stack 'fibs'"),
                       std::invalid_argument);
  CHECK_THROWS_AS(WorkRouter({}), std::invalid_argument);
}

}  // TEST_SUITE
