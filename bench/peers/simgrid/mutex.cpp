// SimGrid peer of `lab bench`: the ESP32 article's workload in its simplest form, in SimGrid's S4U
// API. Two actors share a two-core 240 MHz host; each takes one mutex N times around a 10-cycle
// critical section. No caches, atomics, interrupts or kernel paths are modelled.
//
//   mutex [N]      (default 1000000 per actor)
//
// Prints "critical_sections=<2N> simulated_s=<simulated time>"; lab bench times the process.
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

constexpr double kClockHz = 240e6;      // the ESP32's cores: one flop a cycle
constexpr double kSectionCycles = 10;   // the counter increment and its loads and stores

long sections = 0;

void core(simgrid::s4u::MutexPtr lock, long n)
{
  for (long i = 0; i < n; ++i) {
    std::lock_guard<simgrid::s4u::Mutex> held(*lock);
    simgrid::s4u::this_actor::execute(kSectionCycles);
    ++sections;
  }
}

} // namespace

int main(int argc, char* argv[])
{
  xbt_log_control_set("root.thresh:critical"); // the engine's info messages cost time
  simgrid::s4u::Engine engine(&argc, argv);
  engine.set_config("contexts/factory:raw");   // SimGrid's fastest actor switch
  char* end = nullptr;
  const long n = argc > 1 ? std::strtol(argv[1], &end, 10) : 1000000;
  if (n < 1 || (end != nullptr && *end != '\0')) {
    std::fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
    return 2;
  }
  auto* zone = simgrid::s4u::create_full_zone("soc");
  auto* host = zone->create_host("esp32", kClockHz)->set_core_count(2)->seal();
  zone->seal();
  const auto lock = simgrid::s4u::Mutex::create();
  for (int c = 0; c < 2; ++c)
    simgrid::s4u::Actor::create("core" + std::to_string(c), host, core, lock, n);
  engine.run();
  std::printf("critical_sections=%ld simulated_s=%.9f\n", sections, simgrid::s4u::Engine::get_clock());
  return sections == 2 * n ? 0 : 1;
}
