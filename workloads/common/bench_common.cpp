// The machine description every benchmark's JSON starts with.
#include "bench_common.hpp"

#include <fstream>
#include <thread>
#include <unistd.h>

namespace chanflow::bench {

nlohmann::json machine_info() {
  nlohmann::json m;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  m["host"] = host;
  m["hardware_threads"] = std::thread::hardware_concurrency();
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemTotal", 0) == 0) {
      m["memory"] = line.substr(line.find(':') + 1);
      m["memory"] = m["memory"].get<std::string>().substr(m["memory"].get<std::string>().find_first_not_of(' '));
      break;
    }
  return m;
}

}  // namespace chanflow::bench
