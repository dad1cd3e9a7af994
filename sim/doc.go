// Package sim is SyncLab's discrete-event simulation engine and the hardware
// mechanisms that lock behaviour emerges from: cores and their power states,
// coherent and uncached memory, atomics, exclusive monitors and event
// registers, interrupts and timers, energy. It knows nothing of any OS.
//
// # Processes and time
//
// A Proc is a coroutine written as plain Go that calls primitives such as
// Compute, Load, CAS, LoadExclusive, WFE or Mask, like the firmware it
// models. Only one process runs at a time. A process moves its core's
// clock itself while it is the earliest thing in the simulation
// (conservative lookahead): private work costs no event, and a process
// yields to the engine only where another component could interact with it
// first. Events are ordered by (time, insertion sequence), so a run is a
// function of its inputs and seed, whatever GOMAXPROCS is. A process that
// must wait dispatches the earlier events itself, in that order, and runs a
// process they wake directly (one coroutine switch there and one back),
// going through Run only when the run must stop or a process further up is
// next.
//
// A workload is such processes, not data: sim has no data-level workload
// language. A result file records the experiment's definition (parameters,
// variants, sweep, seed) and the code version, which together determine
// what ran, so programs as data would only duplicate the process API.
//
// # Memory
//
// Every access takes effect at its issue, in time order (the memory is
// linearizable), and the process then stalls until the access completes.
// Cached regions keep per-line ownership (modified/shared/invalid) and
// transfer lines between cores with the latency of their topology
// distance; transfers of one line queue behind each other. Uncached
// regions (ESP32 internal SRAM) serve every access through one port,
// first come, first served. A store by another core clears a core's
// exclusive monitor on the line, which sets its event register: that is
// what wakes an arm64 WFE waiter without any SEV. With
// Coherence.MonitorLoss, another core taking the line for writing without
// a store (a prefetch for store, a failed CAS) clears it too, as where the
// monitor goes with the cached copy (the architecture leaves that to the
// implementation).
//
// # Spinning without an event per iteration
//
// SpinUntil and SpinCAS cost exactly what the polling loop costs without
// simulating each iteration: between writes to the watched line every
// poll sees the same value, so a spinner sleeps until a write, then polls
// at its next iteration boundary. A poll that fails is settled inside its
// event (no context switch), and on uncached memory a spinner's periodic
// port occupancy delays other accesses, and is delayed by them, as the
// explicit loop would be (tests compare the two). With several spinners
// saturating one port, their polls do not delay each other: an
// approximation.
//
// CondWait is arm64's wait on a word (smp_cond_load_acquire: load and test,
// a few polls under some policies, then LDXR and WFE until the line is
// written). Its steps run from the core's wake events, so a waiter woken by
// a write that does not end its wait (a ticket lock's release wakes every
// waiter, one goes on) goes back to sleep without a context switch, and
// polls that hit in the cache with no event between them run at once; each
// step is exactly what the loop written with Load, Relax, LoadExclusive
// and WFE does (tests compare the two). Relax is Compute drawing spin power:
// a poll's pause is a busy-wait, as SpinUntil's polls are. Acquire runs a lock-acquire loop the
// same way: LL/SC attempts, and between them a pause or a CondWait
// (test-and-set, test-and-test-and-set), so a herd of waiters retrying after
// every release costs no context switches either.
//
// # Interrupts
//
// Interrupt lines have levels; a core masks lines at or below its level
// (Mask/Restore). Handlers run on the interrupted process's coroutine, with
// entry and exit costs; an OS model switches tasks from a handler with
// SwitchTo. Latency from assertion to handler start is recorded per line in
// a Histogram.
//
// # Statistics
//
// Percentile is the one percentile definition SyncLab uses (NumPy's
// default, R's type 7). Histogram keeps a distribution of durations in
// memory that does not grow with their number: count, sum, mean, minimum
// and maximum exact, percentiles within HistogramError (0.39%).
//
// # Fast-forward
//
// A workload that settles into a periodic steady state between interrupts
// (two tasks handing a lock back and forth) repeats the same period
// thousands of times. With EnableFastForward the engine compares the whole
// state at the heads of processes' main loops (Proc.Loop): when it has
// moved by the same amount D over two consecutive periods, with everything
// that is not a number exactly equal, it adds k·D at once, for as many
// periods k as end before the next event that did not move with the period
// (a tick, a device interrupt, the time limit) or the end of a loop, and
// simulates on in detail from there. Nothing is estimated: the run ends in
// the state the detailed run ends in, bit for bit, which the tests check on
// every workload that enables it. Model components add their own state
// through Snapshotter; processes must not hold a simulated time in a local
// variable across a wait (see Proc.Loop and Proc.Carry). A run that records
// a trace skips only after SealTrace has closed it at its window's end,
// recording the spans open then, so that its trace is the detailed run's.
//
// # Limits and errors
//
// Run stops at a time limit, reports a RunawayError when the event budget
// runs out, a DeadlockError when nothing can happen while processes wait
// (naming each and what it waits on), and stops promptly when its context
// is cancelled. A livelock is a DeadlockError too: for 10 ms of simulated
// time every process waits on what only another can change (a word it
// spins on with SpinUntil, CondWait or Acquire, a line it watches in WFE,
// or what it said with SetWaiting) and no write changes a value. A loop
// written by hand that does none of these (for p.Swap(a, 1) != 0 { p.Relax(10) })
// is told from long work by what it does: it keeps reading memory, while
// Compute reads nothing. Without limits, when for 100 ms no write changed
// a value, no wait began or ended, no timer or device event is pending and
// every process either is stuck or polls such a loop, the run ends in a
// livelock naming, for each poller, the word its core last accessed and
// its value. A read-only loop that does end after longer than that needs a
// time limit (the watch then looks only at the limit). A negative duration or cycle count given to a
// process primitive (Delay, Sleep, Compute, Relax, SendIPI, a spin's loop)
// ends the run with an error naming the process, the call and the value,
// and so does an access to an address outside memory or not word-aligned
// (an *AddrError).
//
// # Files
//
//   - engine.go: the engine, events and Run with its stops; queue.go: the
//     calendar queue of events; time.go: Time and Clock.
//   - core.go: cores: power states, residency and energy, interrupt lines,
//     event register, wakes.
//   - proc.go: processes: coroutines, context switches, Compute, interrupt
//     masking and dispatch, WFI, idle states, Sleep, Fail.
//   - memory.go: the memory model: regions, lines and their coherence, the
//     uncached port, the timing of an access.
//   - isa.go: the instructions on memory (loads, stores, atomics, the
//     exclusive pair) and on the event register (WFE, SEV).
//   - spin.go: SpinUntil and SpinCAS, spinning without an event per poll.
//   - irq.go: timers, devices and inter-processor interrupts.
//   - ffwd.go: fast-forward. Each component records its own state in a
//     snapshot method beside it; snapshot_test.go fails on a field that is
//     neither recorded nor listed as exempt, with the reason.
//   - stats.go: Percentile and Histogram.
//   - trace.go: timeline spans; bench.go: the engine benchmark.
package sim
