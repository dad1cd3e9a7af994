// Package esp32 models the ESP32 (2 x Xtensa LX6, internal SRAM with no data
// cache) running ESP-IDF v5.x FreeRTOS SMP, in enough depth that the cost of
// its synchronization primitives emerges from mechanisms: portMUX spinlocks
// (S32C1I at the shared SRAM port), interrupt masking, the global kernel
// lock, crosscore yield interrupts, context switches and ticks.
//
// Every number the model uses is a platforms.Param with its provenance (see
// params.go). Kernel paths are Go functions on a *sim.Proc named and
// structured like their C originals in tasks.c, queue.c and port.c, so a
// reader can check one against the other.
//
// # Where things are
//
// The kernel files follow the IDF sources they model:
//
//   - soc.go: the hardware (cores, SRAM behind one port, PSRAM, interrupt
//     lines); params.go: its parameters and their sources.
//   - kernel.go: the Kernel's state and construction, interrupt dispatch, and
//     the cost accounting every kernel path goes through.
//   - port.go: portMUX spinlocks (spinlock.h) and port.c's critical sections.
//   - crosscore.go: crosscore_int.c, the yield interrupt between cores.
//   - tasks.go: tasks.c's scheduler: the TCB, ready, delayed and event lists,
//     context switches, the tick. As in IDF, the running tasks stay on the
//     ready lists, and a core selects the first task it may run from the
//     head of the highest list and moves it to the tail ("best effort round
//     robin"); only core 0's tick handles timeouts, and it yields no other
//     core for the tasks it readies.
//   - lifecycle.go: task creation, the scheduler start with its idle tasks,
//     and a task's deletion at its end.
//   - queue.go: queue.c's semaphores and mutexes, priority inheritance;
//     msgqueue.go: its message queues (xQueueSend, xQueueReceive,
//     xQueuePeek, xQueueOverwrite, xQueueSendFromISR).
//   - notify.go: task notifications, and the calls a task's code makes.
//   - blame.go and snapshot.go: attribution of interrupt latency, and the
//     kernel's state for fast-forward.
//   - workload.go and scenarios.go: the workloads run on the model;
//     experiments.go: the experiments built on them (definitions, metrics),
//     which the catalog lists.
package esp32
