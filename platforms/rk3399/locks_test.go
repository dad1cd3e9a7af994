package rk3399

import (
	"context"
	"fmt"
	"os"
	"testing"

	"synclab/platforms/linux"
	"synclab/sim"
)

// rig is an RK3399 at default parameters with n cores and the Linux kernel.
type rig struct {
	e     *sim.Engine
	k     *linux.Kernel
	cores []*sim.Core
}

func newRig(t *testing.T, n int, seed uint64, tweak func(v map[string]float64)) rig {
	t.Helper()
	v := Defaults()
	if tweak != nil {
		tweak(v)
	}
	soc, err := SoC(v)
	if err != nil {
		t.Fatal(err)
	}
	e := sim.NewEngine(seed)
	t.Cleanup(e.Close)
	const base, size = sim.Addr(0x10000), 1 << 16
	cores, mem, err := soc.Build(e, n, base, size)
	if err != nil {
		t.Fatal(err)
	}
	k, err := linux.New(e, cores, mem, base, size, Kernel(v))
	if err != nil {
		t.Fatal(err)
	}
	return rig{e, k, cores}
}

func (r rig) run(t *testing.T) {
	t.Helper()
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wait(m linux.Mode) linux.Wait {
	return linux.Wait{Mode: m, RelaxCycles: 20, SpinLimit: 50, WFELimit: 3}
}

// Every flavour under every wait policy keeps mutual exclusion at high
// contention with interrupt-context acquisitions: never two holders, and no
// increment of the (non-atomic) counter is lost.
func TestMutualExclusion(t *testing.T) {
	for _, f := range linux.Flavours {
		for _, m := range []linux.Mode{linux.WFE, linux.WFI, linux.Relax, linux.Adaptive, linux.Tiered} {
			for seed := uint64(1); seed <= 3; seed++ {
				v := AllParams().Values()
				v["load"], v["cs_us"], v["outside_us"], v["irq_mean_us"], v["duration_ms"] = 1, 2, 2, 50, 20
				w, err := SpinlockWait(v, m)
				if err != nil {
					t.Fatal(err)
				}
				w.Flavour = f
				r, err := w.Run(context.Background(), seed)
				if err != nil {
					t.Fatalf("%s/%s seed %d: %v", f, m, seed, err)
				}
				if r.MaxHolders != 1 || r.Counter != r.Expected || r.Ops == 0 {
					t.Errorf("%s/%s seed %d: max holders %d, counter %d, expected %d, ops %d", f, m, seed, r.MaxHolders, r.Counter, r.Expected, r.Ops)
				}
			}
		}
	}
}

// handoffRig runs rounds: cpu0 takes the lock, keeps it while idle for a
// random time, releases; cpu1 (same cluster) tries meanwhile. It returns, per
// round, the release time and when cpu1 next touched lock memory (its wake)
// and acquired the lock.
func handoffRounds(t *testing.T, r rig, l linux.Spinlock, rounds int, irqsave bool) (rel, woke, got []sim.Time) {
	held, round := false, 0
	rel, woke, got = make([]sim.Time, rounds), make([]sim.Time, rounds), make([]sim.Time, rounds)
	r.k.Count = func(cpu int, a sim.Addr) {
		if cpu == 1 && round < rounds && rel[round] > 0 && woke[round] == 0 {
			woke[round] = r.e.Now()
		}
	}
	rng := r.e.Stream("test/holder")
	r.e.Spawn(r.cores[0], "holder", func(p *sim.Proc) {
		for i := 0; i < rounds; i++ {
			l.Lock(p)
			held = true
			r.k.Sleep(p, sim.Time(rng.Float64()*float64(8*sim.Millisecond))+sim.Millisecond)
			held = false
			rel[i] = p.Now()
			l.Unlock(p)
			for round == i {
				r.k.Sleep(p, 100*sim.Microsecond)
			}
		}
	})
	r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
		for i := 0; i < rounds; i++ {
			for !held {
				r.k.Sleep(p, 100*sim.Microsecond)
			}
			flags := 0
			if irqsave {
				flags = linux.LocalIRQSave(p)
			}
			l.Lock(p)
			got[i] = p.Now()
			l.Unlock(p)
			if irqsave {
				linux.LocalIRQRestore(p, flags)
			}
			round++
		}
	})
	r.run(t)
	return rel, woke, got
}

// A WFI waiter (interrupts enabled) is not woken by the release: it
// acquires at its next tick. Releases at random times relative to the tick
// grid give a mean delay of half a tick period (2 ms at HZ=250), plus the
// tick handler and wake costs (~ 10 us). Tolerance: 12%, about 3 standard
// errors of the mean of 150 uniform residuals.
func TestWFIWaiterWaitsHalfATick(t *testing.T) {
	for _, hz := range []float64{250, 1000} {
		r := newRig(t, 2, 3, func(v map[string]float64) { v["hz"] = hz })
		l, err := r.k.NewSpinlock(linux.QSpinlock, wait(linux.WFI))
		if err != nil {
			t.Fatal(err)
		}
		const n = 150
		rel, _, got := handoffRounds(t, r, l, n, false)
		var sum sim.Time
		for i := range rel {
			sum += got[i] - rel[i]
		}
		mean := sum / n
		half := sim.Second / sim.Time(hz) / 2
		if d := float64(mean-half) / float64(half); d < -0.12 || d > 0.12 {
			t.Errorf("HZ=%v: mean WFI hand-off %v, want half a tick %v within 12%%", hz, mean, half)
		}
		t.Logf("HZ=%v: mean WFI hand-off %v (half tick %v)", hz, mean, half)
	}
}

// A WFE waiter (qspinlock, smp_cond_load_acquire) wakes within one line
// transfer plus the wake cost after the release store is issued; with every
// wake event lost it still wakes within one event-stream period.
func TestWFEWakeBound(t *testing.T) {
	v := Defaults()
	hz := v["a53_mhz"] * 1e6
	wake := sim.Time(v["wake_cycles"] / hz * float64(sim.Second))
	transfer := sim.Time(v["same_cluster_ns"] * float64(sim.Nanosecond))
	for _, tc := range []struct {
		name  string
		lose  float64
		bound sim.Time
	}{
		{"events delivered", 0, transfer + wake + sim.Nanosecond},
		{"all events lost, event stream", 1, EventStreamPeriod + wake + sim.Nanosecond},
	} {
		r := newRig(t, 2, 5, nil)
		if err := r.e.SetFaults(sim.Faults{LoseWake: tc.lose}); err != nil {
			t.Fatal(err)
		}
		l, err := r.k.NewSpinlock(linux.QSpinlock, wait(linux.WFE))
		if err != nil {
			t.Fatal(err)
		}
		rel, woke, _ := handoffRounds(t, r, l, 40, true)
		var worst sim.Time
		for i := range rel {
			worst = max(worst, woke[i]-rel[i])
		}
		if worst > tc.bound || worst <= 0 {
			t.Errorf("%s: worst wake %v after release, want in (0, %v]", tc.name, worst, tc.bound)
		}
		t.Logf("%s: worst wake %v after release (bound %v)", tc.name, worst, tc.bound)
	}
}

// With wake events lost and the event stream off, a WFE waiter with
// interrupts masked has nothing left to wake it: the run deadlocks. The
// redundant SEV gives the release a second chance, which is why the
// article's workaround helped on its buggy SoC.
func TestLostWakeWithoutEventStream(t *testing.T) {
	r := newRig(t, 2, 5, func(v map[string]float64) { v["event_stream"] = 0 })
	if err := r.e.SetFaults(sim.Faults{LoseWake: 1}); err != nil {
		t.Fatal(err)
	}
	l, _ := r.k.NewSpinlock(linux.QSpinlock, wait(linux.WFE))
	r.e.Spawn(r.cores[0], "holder", func(p *sim.Proc) { l.Lock(p); p.Delay(sim.Millisecond); l.Unlock(p) })
	r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
		p.Delay(100 * sim.Microsecond)
		f := linux.LocalIRQSave(p)
		l.Lock(p)
		l.Unlock(p)
		linux.LocalIRQRestore(p, f)
	})
	r.e.Until = 100 * sim.Millisecond
	err := r.e.Run(context.Background())
	if r.e.Now() < r.e.Until && err == nil {
		t.Fatalf("waiter finished at %v although every wake-up was lost and the event stream is off", r.e.Now())
	}
}

// The ticket lock grants in arrival (ticket) order.
func TestTicketFIFO(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		r := newRig(t, 6, seed, nil)
		l, _ := r.k.NewSpinlock(linux.Ticket, wait(linux.WFE))
		var order []int
		rng := r.e.Stream("test/arrivals")
		for i, c := range r.cores {
			at := sim.Time(i)*5*sim.Microsecond + sim.Time(rng.IntN(1000))*sim.Nanosecond
			r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
				p.Delay(at)
				l.Lock(p)
				order = append(order, i)
				p.Delay(100 * sim.Microsecond)
				l.Unlock(p)
			})
		}
		r.run(t)
		for i, c := range order {
			if c != i {
				t.Fatalf("seed %d: grant order %v, want arrival order", seed, order)
			}
		}
	}
}

// qspinlock: while queued behind the MCS head, a waiter touches only its
// own per-CPU node line, never the lock word's line.
func TestMCSWaitersSpinOnOwnLine(t *testing.T) {
	for _, m := range []linux.Mode{linux.WFE, linux.Relax} {
		r := newRig(t, 5, 1, nil)
		l, _ := r.k.NewSpinlock(linux.QSpinlock, wait(m))
		lockLine := l.Word() / 64
		from, to := 200*sim.Microsecond, 2*sim.Millisecond
		touched := make([]map[sim.Addr]int, 5)
		for i := range touched {
			touched[i] = map[sim.Addr]int{}
		}
		r.k.Count = func(cpu int, a sim.Addr) {
			if now := r.e.Now(); now >= from && now < to {
				touched[cpu][a/64]++
			}
		}
		for i, c := range r.cores {
			r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
				p.Delay(sim.Time(i) * 20 * sim.Microsecond)
				f := linux.LocalIRQSave(p)
				l.Lock(p)
				p.Delay(to)
				l.Unlock(p)
				linux.LocalIRQRestore(p, f)
			})
		}
		r.run(t)
		// cpu1 is the pending waiter and cpu2 the queue head: both watch
		// the lock word. cpu3 and cpu4 are queued behind.
		for _, cpu := range []int{3, 4} {
			if touched[cpu][lockLine] != 0 || len(touched[cpu]) > 1 {
				t.Errorf("%v: queued cpu%d touched lines %v while queued; lock line %#x", m, cpu, touched[cpu], uint64(lockLine))
			}
		}
		if touched[1][lockLine] == 0 && m == linux.WFE {
			t.Errorf("%v: the pending waiter never re-read the lock word (event stream wake-ups expected)", m)
		}
	}
}

// TestSimMonitorArmedAfterInFlightWrite documents a sim bug (set
// SYNCLAB_SIM_BUGS=1 to run it): a core's LDXR whose line transfer is in
// flight when another core issues a store arms its monitor after the store
// was announced, so the store (landing later) neither clears the monitor nor
// is seen by the LDXR, and the following WFE is never woken by it. Linux
// would see the store; platforms/linux works around it (Kernel.ldxr,
// Kernel.republish). Without the work-around TestMutualExclusion broke
// (two holders, an LL/SC cmpxchg racing a FetchAdd) and Relax waiters hung.
// NOTE: this two-core form does not reproduce it yet (the WFE returns at the
// fill time, 120 ns, for a reason not yet pinned down); the bug is reproduced
// by removing the work-around and running TestMutualExclusion.
func TestSimMonitorArmedAfterInFlightWrite(t *testing.T) {
	if os.Getenv("SYNCLAB_SIM_BUGS") == "" {
		t.Skip("documents a sim bug; set SYNCLAB_SIM_BUGS=1")
	}
	r := newRig(t, 2, 1, func(v map[string]float64) { v["event_stream"] = 0 })
	const a = sim.Addr(0x18000)
	var woke sim.Time
	r.e.Spawn(r.cores[0], "reader", func(p *sim.Proc) {
		v := p.LoadExclusive(a)
		t.Logf("ldxr read %d at %v", v, p.Now())
		if v == 0 { // issued at 0, lands at DRAM latency
			p.WFE() // the store below must wake this
		}
		woke = p.Now()
		t.Logf("woke at %v", woke)
	})
	r.e.Spawn(r.cores[1], "writer", func(p *sim.Proc) {
		p.Delay(10 * sim.Nanosecond) // while the reader's fill is in flight
		p.Store(a, 1)
	})
	r.e.Until = sim.Millisecond
	if err := r.e.Run(context.Background()); err != nil || woke == 0 {
		t.Fatalf("WFE after LDXR never woken by a store issued during the LDXR's fill (err %v)", err)
	}
}
