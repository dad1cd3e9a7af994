#!/usr/bin/python3
"""SimPy peer of `lab bench`: the ESP32 article's workload in its simplest form, in SimPy 2's
object-oriented API (Debian's python3-simpy, hence /usr/bin/python3). Two processes share a
240 MHz part; each takes a capacity-1 resource N times around a 10-cycle critical section. No
caches, atomics, interrupts or kernel paths are modelled.

    mutex.py [N]      (default 1000000 per process)

Prints "critical_sections=<2N> simulated_s=<simulated time>"; lab bench times the process.
"""
import sys

from SimPy.Simulation import Process, Resource, Simulation, hold, release, request

CLOCK_HZ = 240e6
SECTION_CYCLES = 10


class Core(Process):
    """One core: N acquisitions of the lock, each held for the critical section."""

    sections = 0

    def work(self, lock, n):
        for _ in range(n):
            yield request, self, lock
            yield hold, self, SECTION_CYCLES / CLOCK_HZ
            Core.sections += 1
            yield release, self, lock


def main(argv):
    try:
        n = int(argv[1]) if len(argv) > 1 else 1_000_000
    except ValueError:
        n = 0
    if n < 1:
        sys.exit(f"usage: {argv[0]} [N > 0]")
    sim = Simulation()
    sim.initialize()
    lock = Resource(capacity=1, sim=sim)
    for c in range(2):
        core = Core(name=f"core{c}", sim=sim)
        sim.activate(core, core.work(lock, n))
    sim.simulate(until=1e9)
    print(f"critical_sections={Core.sections} simulated_s={sim.now():.9f}")
    return 0 if Core.sections == 2 * n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
