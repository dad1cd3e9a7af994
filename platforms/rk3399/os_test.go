package rk3399

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"synclab/platforms/linux"
	"synclab/sim"
)

// withOS maps a crafted run's books to the OS metrics: busy share of the
// used cores' time, schedule() calls, WFET timeouts.
// Kills: busy computed from one core, or from the lock-wait time.
func TestOSMetricsFromACraftedRun(t *testing.T) {
	r := Result{Elapsed: 2 * sim.Second, Idle: 3 * sim.Second, Schedules: 7, WaitTime: sim.Second,
		Wakeups: map[string]int{sim.WakeTimer.String(): 5, sim.WakeEvent.String(): 9}}
	m := withOS(map[string]float64{}, Workload{Cores: 4}, r)
	want := map[string]float64{"cpu_busy_pct": 62.5, "schedules": 7, "wakeups_timeout": 5} // 1 - 3/(4 x 2)
	for k, v := range want {
		if math.Abs(m[k]-v) > 1e-12 {
			t.Errorf("%s = %g, want %g", k, m[k], v)
		}
	}
	if len(m) != len(osMetrics) {
		t.Errorf("%d metrics, want %d", len(m), len(osMetrics))
	}
}

// The threads' lock call: with plain spin_lock (NoIRQSave) the device
// handler on cpu0 deadlocks on the lock cpu0's thread holds or is queued
// for, named in a sim.DeadlockError; without the handler the run completes
// and, with a small wfe_limit, the tiered policy sleeps in schedule(),
// which it never does under spin_lock_irqsave.
// Kills: take ignoring NoIRQSave, or masking interrupts in both cases.
func TestNoIRQSave(t *testing.T) {
	w := testWorkload(t, linux.QSpinlock, linux.WFE, func(w *Workload) { w.NoIRQSave = true })
	_, err := w.Run(context.Background(), 1)
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) || !strings.Contains(dl.Error(), "the interrupt handler interrupting worker/0 (core 0)") || !strings.Contains(dl.Error(), "by worker/0") {
		t.Fatalf("plain spin_lock with a handler on cpu0: error %v; want a deadlock of the handler on the lock worker/0 holds or queues for", err)
	}
	for _, noSave := range []bool{false, true} {
		w := testWorkload(t, linux.QSpinlock, linux.Tiered, func(w *Workload) {
			w.NoIRQSave, w.IRQMean, w.Wait.WFELimit = noSave, 0, 1
		})
		r := w.mustRun(t, 1)
		if (r.Schedules > 0) != noSave || r.Counter != uint64(r.Ops) || r.Contended > r.Ops {
			t.Errorf("NoIRQSave=%v, tiered: %d schedule() calls, counter %d of %d, %d contended; want calls only with NoIRQSave",
				noSave, r.Schedules, r.Counter, r.Ops, r.Contended)
		}
	}
}

// PerCluster gives each cluster one lock: a core takes its cluster's
// (A53s cpu0-3 lock 0, A72s cpu4-5 lock 1), so holds carry those labels,
// and contention remains inside each cluster.
// Kills: lockOf ignoring PerCluster, or one lock per CPU.
func TestPerClusterLocks(t *testing.T) {
	w := testWorkload(t, linux.QSpinlock, linux.WFE, func(w *Workload) {
		w.Split, w.PerCluster = true, true
		w.Trace = sim.NewTrace(0, sim.Second, 1_000_000)
	})
	r := w.mustRun(t, 1)
	for _, s := range w.Trace.Spans {
		if s.Lane != "lock" || s.Label == "wait" {
			continue
		}
		if want := fmt.Sprintf("hold lock %d", s.Core/4); s.Label != want {
			t.Fatalf("core %d: %q, want %q", s.Core, s.Label, want)
		}
	}
	if r.Contended == 0 || r.Counter != uint64(r.Ops) {
		t.Errorf("%d contended, counter %d of %d; want contention inside the clusters and every increment", r.Contended, r.Counter, r.Ops)
	}
}

// LoseSEV loses the arm32 ticket lock's SEVs, whose plain-WFE waiters then
// wait for the event stream (85.3 us), and nothing of the arm64 locks,
// which send none: the qspinlock's and the arm64 ticket lock's runs are
// bit-identical with and without it.
// Kills: LoseSEV not reaching the kernel, or dropping monitor events.
func TestLoseSEV(t *testing.T) {
	for _, f := range []linux.Flavour{linux.QSpinlock, linux.TicketArm64, linux.Ticket} {
		clean := testWorkload(t, f, linux.WFE, nil).mustRun(t, 3)
		lossy := testWorkload(t, f, linux.WFE, func(w *Workload) { w.LoseSEV = 0.5 }).mustRun(t, 3)
		same := clean.WaitTime == lossy.WaitTime && clean.Ops == lossy.Ops
		if same != (f != linux.Ticket) || f == linux.Ticket && lossy.Wakeups[sim.WakeEventStream.String()] <= clean.Wakeups[sim.WakeEventStream.String()] {
			t.Errorf("%s: wait %v -> %v, ops %d -> %d, stream wake-ups %d -> %d with half the SEVs lost",
				f, clean.WaitTime, lossy.WaitTime, clean.Ops, lossy.Ops, clean.Wakeups[sim.WakeEventStream.String()], lossy.Wakeups[sim.WakeEventStream.String()])
		}
	}
}
