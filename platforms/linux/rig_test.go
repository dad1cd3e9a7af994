package linux_test

import (
	"context"
	"testing"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// The test machine: clusters of four 1 GHz cores (one cycle is 1 ns, so
// cycle costs read as times), no cpuidle state beyond WFI, the kernel at
// HZ=250. Bounds in the tests derive from these numbers.
const (
	sameCluster  = 100 * sim.Nanosecond
	otherCluster = 250 * sim.Nanosecond
	dram         = 120 * sim.Nanosecond
	eventStream  = 100 * sim.Microsecond
	cycle        = sim.Nanosecond // at 1 GHz
	irqEntry     = 300            // cycles
	irqExit      = 200
	wakeCycles   = 30
	hitCycles    = 4
	relaxCycles  = 20 // wait().RelaxCycles
	tickWork     = 5 * sim.Microsecond
	switchWork   = 3 * sim.Microsecond
	ipiLatency   = sim.Microsecond
	base, size   = sim.Addr(0x10000), 1 << 16
)

// testSoC returns the test machine with n cores.
func testSoC(t *testing.T, n int) generic.SoC {
	t.Helper()
	core := generic.Cluster{Name: "c", Core: "test", OPPs: []generic.OPP{{MHz: 1000, MilliVolt: 900}}, MHz: 1000,
		DynCoeff: 100, StaticMW: 10, SpinShare: 0.8, IRQEntry: irqEntry, IRQExit: irqExit, WakeCycles: wakeCycles, HitCycles: hitCycles}
	soc, err := generic.NCore("test", n, 4, core, generic.SoC{LineSize: 64,
		SameCluster: sameCluster, OtherCluster: otherCluster, DRAM: dram, EventStream: eventStream})
	if err != nil {
		t.Fatal(err)
	}
	return soc
}

func testConfig() linux.Config {
	return linux.Config{HZ: 250, NoHZIdle: true, TickWork: tickWork, SwitchWork: switchWork, IPILatency: ipiLatency}
}

// rig is the test machine booted with the kernel.
type rig struct {
	e     *sim.Engine
	k     *linux.Kernel
	cores []*sim.Core
}

// newRig boots n cores of the test machine with seed; tweak, when non-nil,
// changes the SoC or the kernel configuration first.
func newRig(t *testing.T, n int, seed uint64, tweak func(*generic.SoC, *linux.Config)) rig {
	t.Helper()
	soc, cfg := testSoC(t, n), testConfig()
	if tweak != nil {
		tweak(&soc, &cfg)
	}
	e := sim.NewEngine(seed)
	t.Cleanup(e.Close)
	e.Until = sim.Second // a safety net: every test run ends well before
	cores, mem, err := soc.Build(e, n, base, size)
	if err != nil {
		t.Fatal(err)
	}
	k, err := linux.New(e, cores, mem, base, size, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rig{e, k, cores}
}

// lock allocates a spinlock of flavour f with wait mode m.
func (r rig) lock(t *testing.T, f linux.Flavour, m linux.Mode) linux.Spinlock {
	t.Helper()
	l, err := r.k.NewSpinlock(f, wait(m))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// run runs the simulation; it must end with every process finished.
func (r rig) run(t *testing.T) {
	t.Helper()
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.e.StopReason() != "done" {
		t.Fatalf("run stopped at %v: %s; waiting: %v", r.e.Now(), r.e.StopReason(), r.e.Waiters())
	}
}

// wfetTimeout is wait().Timeout: WFET's bound on each sleep.
const wfetTimeout = 20 * sim.Microsecond

func wait(m linux.Mode) linux.Wait {
	return linux.Wait{Mode: m, RelaxCycles: relaxCycles, SpinLimit: 50, WFELimit: 3, Timeout: wfetTimeout}
}

// lockIRQ takes l with interrupts masked (spin_lock_irqsave) when irqsave,
// else with the plain spin_lock, and returns what unlockIRQ needs.
func lockIRQ(p *sim.Proc, l linux.Spinlock, irqsave bool) (flags int) {
	if irqsave {
		return linux.SpinLockIRQSave(p, l)
	}
	l.Lock(p)
	return -1
}

func unlockIRQ(p *sim.Proc, l linux.Spinlock, flags int) {
	if flags < 0 {
		l.Unlock(p)
		return
	}
	linux.SpinUnlockIRQRestore(p, l, flags)
}

// handoff is one round of handoffRounds: the attempt by cpu1, the release
// by cpu0, the first lock-code access by cpu1 after it (its wake) and its
// acquisition.
type handoff struct{ try, rel, woke, got sim.Time }

// handoffRounds runs rounds: cpu0 takes l and keeps it while idle for 1 to 9
// ms (random), then releases; cpu1 (same cluster) tries meanwhile, with
// interrupts masked when irqsave. Rounds whose cpu1 never acquired have got
// 0 (the run stopped at e.Until or deadlocked: its error is returned).
func handoffRounds(r rig, l linux.Spinlock, rounds int, irqsave bool) ([]handoff, error) {
	held, round := false, 0
	h := make([]handoff, rounds)
	r.k.Count = func(cpu int, _ sim.Addr) {
		if cpu == 1 && round < rounds && h[round].rel > 0 && h[round].woke == 0 {
			h[round].woke = r.e.Now()
		}
	}
	rng := r.e.Stream("test/holder")
	r.e.Spawn(r.cores[0], "holder", func(p *sim.Proc) {
		for i := range rounds {
			l.Lock(p)
			held = true
			r.k.Sleep(p, sim.Time(rng.Float64()*float64(8*sim.Millisecond))+sim.Millisecond)
			held = false
			h[i].rel = p.Now()
			l.Unlock(p)
			for round == i {
				r.k.Sleep(p, 100*sim.Microsecond)
			}
		}
	})
	r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
		for i := range rounds {
			for !held {
				r.k.Sleep(p, 100*sim.Microsecond)
			}
			h[i].try = p.Now()
			flags := lockIRQ(p, l, irqsave)
			h[i].got = p.Now()
			unlockIRQ(p, l, flags)
			round++
		}
	})
	return h, r.e.Run(context.Background())
}
