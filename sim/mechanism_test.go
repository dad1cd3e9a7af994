package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// rig builds an engine with n identical 1 GHz cores (1 cycle = 1 ns), cores
// 0-1 in cluster 0 and 2-3 in cluster 1, and one 4 KiB region at 0x1000.
type rig struct {
	e *Engine
	m *Memory
}

const (
	ramBase  Addr = 0x1000
	sameLat       = 50 * Nanosecond
	otherLat      = 200 * Nanosecond
	dramLat       = 100 * Nanosecond
)

func newRig(t testing.TB, n int, uncached bool, tweak func(*CoreConfig)) rig {
	t.Helper()
	e := NewEngine(7)
	for i := 0; i < n; i++ {
		cfg := CoreConfig{Name: "cpu", Cluster: i / 2, Hz: 1_000_000_000, ExecMW: 100, SpinMW: 90, WFEMW: 10, WFIMW: 5,
			IRQEntry: 10, IRQExit: 10, WakeCycles: 5, HitCycles: 1}
		if tweak != nil {
			tweak(&cfg)
		}
		if _, err := e.AddCore(cfg); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(Coherence{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(Region{Name: "ram", Base: ramBase, Size: 4096, Uncached: uncached, Latency: dramLat, Occupancy: 20 * Nanosecond}); err != nil {
		t.Fatal(err)
	}
	return rig{e, m}
}

func (r rig) run(t testing.TB) {
	t.Helper()
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Two cores writing one line in turn pay the transfer latency between them
// on every write; the first write fills the line from memory.
func TestLinePingPong(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other int // the second writer
		want  Time
	}{
		{"same cluster", 1, sameLat},
		{"other cluster", 2, otherLat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 4, false, nil)
			var got [2][]Time
			writer := func(idx, start int) func(p *Proc) {
				return func(p *Proc) {
					p.Delay(Time(start) * Microsecond)
					for i := 0; i < 5; i++ {
						t0 := p.Now()
						p.Store(ramBase, uint64(i))
						got[idx] = append(got[idx], p.Now()-t0)
						p.Delay(2*Microsecond - (p.Now() - t0))
					}
				}
			}
			r.e.Spawn(r.e.Cores()[0], "w0", writer(0, 0))
			r.e.Spawn(r.e.Cores()[tc.other], "w1", writer(1, 1))
			r.run(t)
			if got[0][0] != dramLat {
				t.Errorf("first write took %v, want the memory fill %v", got[0][0], dramLat)
			}
			for i := 1; i < 5; i++ {
				if got[0][i] != tc.want {
					t.Errorf("writer 0, write %d took %v, want %v", i, got[0][i], tc.want)
				}
			}
			for i, d := range got[1] {
				if d != tc.want {
					t.Errorf("writer 1, write %d took %v, want %v", i, d, tc.want)
				}
			}
		})
	}
}

// A contended line is a queue: writes by three cores at the same instant
// complete one transfer apart.
func TestLineTransfersSerialize(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.m.Poke(ramBase, 0)
	var done []Time
	r.e.Spawn(r.e.Cores()[0], "a", func(p *Proc) {
		p.Load(ramBase)
		p.Delay(Microsecond + Nanosecond - p.Now())
		p.Store(ramBase, 1)
		done = append(done, p.Now())
	})
	r.e.Spawn(r.e.Cores()[1], "b", func(p *Proc) { p.Delay(Microsecond); p.Store(ramBase, 2); done = append(done, p.Now()) })
	r.run(t)
	// a holds the line; b's write at 1us transfers it (50ns) while a's own
	// write queues behind and takes it back (another 50ns).
	want := []Time{Microsecond + sameLat, Microsecond + 2*sameLat}
	if len(done) != 2 || done[0] != want[0] || done[1] != want[1] {
		t.Fatalf("completion times %v, want %v", done, want)
	}
}

// On uncached memory the port serializes every access.
func TestUncachedPortArbitration(t *testing.T) {
	r := newRig(t, 2, true, nil)
	var ends []Time
	for i := 0; i < 2; i++ {
		r.e.Spawn(r.e.Cores()[i], "p", func(p *Proc) {
			p.Load(ramBase + Addr(8*p.Core().ID))
			ends = append(ends, p.Now())
		})
	}
	r.run(t)
	// Latency 100ns, occupancy 20ns: the second access starts 20ns later.
	if ends[0] != dramLat || ends[1] != dramLat+20*Nanosecond {
		t.Fatalf("ends %v, want [%v %v]", ends, dramLat, dramLat+20*Nanosecond)
	}
}

// waitForRelease runs a WFE waiter on core 1 and a releasing store on core
// 0 at 1us; it returns when the waiter's WFE returned and why.
func waitForRelease(t *testing.T, r rig, releaseAt Time) (Time, WakeCause) {
	t.Helper()
	r.m.Poke(ramBase, 1)
	var woke Time
	var cause WakeCause
	r.e.Spawn(r.e.Cores()[1], "waiter", func(p *Proc) {
		if p.LoadExclusive(ramBase) != 1 {
			t.Error("lock not held")
		}
		cause = p.WFE()
		woke = p.Now()
	})
	r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) {
		p.Load(ramBase)
		p.Delay(releaseAt - p.Now())
		p.Store(ramBase, 0)
	})
	r.run(t)
	return woke, cause
}

// A WFE waiter wakes when the holder's store lands: the store clears the
// waiter's exclusive monitor, which sets its event register. No SEV.
func TestWFEWakesOnMonitorClear(t *testing.T) {
	r := newRig(t, 2, false, nil)
	woke, cause := waitForRelease(t, r, Microsecond)
	// store issued at 1us, invalidation reaches the waiter 50ns later,
	// then 5 wake cycles.
	want := Microsecond + sameLat + 5*Nanosecond
	if woke != want || cause != WakeEvent {
		t.Fatalf("woke at %v by %v, want %v by event", woke, cause, want)
	}
	if n := r.e.Cores()[1].Wakeups[WakeEvent]; n != 1 {
		t.Fatalf("event wake-ups counted %d, want 1", n)
	}
}

// With the monitor-clear wake-up lost, the waiter sleeps to the next tick
// of the event stream.
func TestWFEFallsBackToEventStream(t *testing.T) {
	r := newRig(t, 2, false, func(c *CoreConfig) { c.EventStream = 100 * Microsecond })
	if err := r.e.SetFaults(Faults{LoseWake: 1}); err != nil {
		t.Fatal(err)
	}
	woke, cause := waitForRelease(t, r, Microsecond)
	want := 100*Microsecond + 5*Nanosecond
	if woke != want || cause != WakeEventStream {
		t.Fatalf("woke at %v by %v, want %v by event-stream", woke, cause, want)
	}
}

// A lost wake-up with neither event stream nor interrupt is a deadlock,
// reported with the waiter.
func TestLostWakeWithoutStreamDeadlocks(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.e.SetFaults(Faults{LoseWake: 1})
	r.m.Poke(ramBase, 1)
	w := r.e.Spawn(r.e.Cores()[1], "waiter", func(p *Proc) {
		p.LoadExclusive(ramBase)
		p.SetWaiting("lock word 0x1000 in WFE", false)
		p.WFE()
	})
	r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Store(ramBase, 0) })
	err := r.e.Run(context.Background())
	var dl *DeadlockError
	if !errors.As(err, &dl) || len(dl.Waiters) != 1 || dl.Waiters[0].Proc != w.Name || !strings.Contains(err.Error(), "lock word 0x1000") {
		t.Fatalf("got %v, want a deadlock naming the waiter and its lock", err)
	}
}

// SEV wakes every WFE sleeper.
func TestSEVWakesWFE(t *testing.T) {
	r := newRig(t, 3, false, nil)
	var woke []Time
	for i := 1; i < 3; i++ {
		r.e.Spawn(r.e.Cores()[i], "w", func(p *Proc) { p.WFE(); woke = append(woke, p.Now()) })
	}
	r.e.Spawn(r.e.Cores()[0], "s", func(p *Proc) { p.Delay(Microsecond); p.SEV() })
	r.run(t)
	if len(woke) != 2 || woke[0] != Microsecond+5*Nanosecond || woke[1] != woke[0] {
		t.Fatalf("woke %v, want both at 1.005us", woke)
	}
}

// A WFI waiter is not woken by the release; it sleeps to the next tick.
func TestWFIWakesAtTick(t *testing.T) {
	r := newRig(t, 2, false, nil)
	const tick = IRQ(1)
	var handled Time
	c1 := r.e.Cores()[1]
	c1.SetHandler(func(p *Proc, irq IRQ) { handled = p.Now() })
	if err := c1.NewTimer(tick).Periodic(Millisecond, Millisecond); err != nil {
		t.Fatal(err)
	}
	r.m.Poke(ramBase, 1)
	var got uint64
	r.e.Spawn(c1, "waiter", func(p *Proc) {
		for {
			if got = p.Load(ramBase); got == 0 {
				return
			}
			p.WFI()
		}
	})
	r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Delay(10 * Microsecond); p.Store(ramBase, 0) })
	r.run(t)
	// tick at 1ms, 5ns to leave WFI, 10ns interrupt entry.
	if want := Millisecond + 15*Nanosecond; handled != want {
		t.Fatalf("tick handled at %v, want %v", handled, want)
	}
}

// An interrupt raised while masked is delayed until the mask is lifted.
func TestMaskedInterruptDelayed(t *testing.T) {
	for _, masked := range []Time{0, 500 * Nanosecond, 3 * Microsecond} {
		r := newRig(t, 1, false, nil)
		c := r.e.Cores()[0]
		c.NewTimer(3).OneShot(150 * Nanosecond)
		r.e.Spawn(c, "task", func(p *Proc) {
			p.Delay(100 * Nanosecond)
			prev := p.Mask(1)
			p.Delay(masked)
			p.Restore(prev)
			p.Delay(10 * Microsecond)
		})
		r.run(t)
		lat := c.IRQLatency(3)
		want := 10 * Nanosecond // entry cost
		if end := 100*Nanosecond + masked; end > 150*Nanosecond {
			want += end - 150*Nanosecond
		}
		if len(lat) != 1 || lat[0] != want {
			t.Errorf("masked %v: latency %v, want [%v]", masked, lat, want)
		}
	}
}

// Compute interrupted by an interrupt resumes and finishes its work: the
// total equals the work plus the handler.
func TestComputePreemptedByInterrupt(t *testing.T) {
	r := newRig(t, 1, false, nil)
	c := r.e.Cores()[0]
	c.SetHandler(func(p *Proc, irq IRQ) { p.Compute(100) })
	c.NewTimer(2).OneShot(300 * Nanosecond)
	var end Time
	r.e.Spawn(c, "task", func(p *Proc) { p.Compute(1000); end = p.Now() })
	r.run(t)
	if want := 1000*Nanosecond + 120*Nanosecond; end != want {
		t.Fatalf("compute ended at %v, want %v (work + entry + handler + exit)", end, want)
	}
	if got := c.Residency(StateIRQ); got != 120*Nanosecond {
		t.Fatalf("irq residency %v, want 120ns", got)
	}
}

// spinCAS takes the lock word at ramBase (free is 0) with SpinCAS, or with
// the explicit retry loop it stands for (a 40-cycle loop body).
func spinCAS(p *Proc, analytic bool, me uint64) {
	if analytic {
		p.SpinCAS(ramBase, 0, me, 40)
		return
	}
	for {
		if _, ok := p.CAS(ramBase, 0, me); ok {
			return
		}
		p.Compute(40)
	}
}

// Spinning analytically costs what the explicit loop costs: the spinner
// acquires the lock at the first poll after the release lands.
func TestSpinCASMatchesExplicitLoop(t *testing.T) {
	for _, uncached := range []bool{true, false} {
		acquire := func(analytic bool) Time {
			r := newRig(t, 2, uncached, nil)
			r.m.Poke(ramBase, 1)
			var got Time
			r.e.Spawn(r.e.Cores()[1], "spinner", func(p *Proc) {
				p.Delay(30 * Nanosecond)
				spinCAS(p, analytic, 2)
				got = p.Now()
			})
			r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Delay(1003 * Nanosecond); p.Store(ramBase, 0) })
			r.run(t)
			return got
		}
		a, b := acquire(true), acquire(false)
		if uncached && a != b {
			t.Errorf("uncached: analytic spin acquired at %v, explicit loop at %v", a, b)
		}
		if !uncached && a < Microsecond {
			t.Errorf("cached: acquired at %v before the release", a)
		}
	}
}

// A store issued while a spinner's read of the line is still in flight is
// not missed: the spinner polls again instead of waiting for a write that
// has already happened.
func TestSpinSeesWriteDuringItsRead(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.m.Poke(ramBase, 1)
	var got uint64
	r.e.Spawn(r.e.Cores()[1], "spinner", func(p *Proc) {
		got = p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 }) // fill from memory: 0..100ns
	})
	r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Delay(50 * Nanosecond); p.Store(ramBase, 0) })
	r.run(t)
	if got != 0 {
		t.Fatalf("spinner returned %d", got)
	}
	if n := r.m.Misses(ramBase); n < 3 {
		t.Fatalf("line moved %d times, want the fill, the store and the re-read", n)
	}
}

// On uncached memory a write that does not free the lock (a hand-off to
// another owner) does not wake the spinner, and holders' accesses around
// its polls are settled without yielding; the acquisition time still
// equals the explicit loop's, with fewer events.
func TestSpinCASUncachedHandOff(t *testing.T) {
	acquire := func(analytic bool) (Time, uint64) {
		r := newRig(t, 3, true, nil)
		r.m.Poke(ramBase, 1)
		var got Time
		r.e.Spawn(r.e.Cores()[2], "spinner", func(p *Proc) {
			p.Delay(30 * Nanosecond)
			spinCAS(p, analytic, 3)
			got = p.Now()
		})
		r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) {
			for i := 0; i < 20; i++ { // bus traffic beside the spinner's polls
				p.Store(ramBase+64, uint64(i))
				p.Compute(17)
			}
			p.Delay(1003*Nanosecond - p.Now())
			p.Store(ramBase, 2) // hand the lock to core 1
		})
		r.e.Spawn(r.e.Cores()[1], "next", func(p *Proc) { p.Delay(2501 * Nanosecond); p.Store(ramBase, 0) })
		r.run(t)
		return got, r.e.Events()
	}
	a, aev := acquire(true)
	b, bev := acquire(false)
	if a != b {
		t.Fatalf("analytic spin acquired at %v, explicit loop at %v", a, b)
	}
	if aev >= bev {
		t.Fatalf("analytic spin used %d events, explicit loop %d", aev, bev)
	}
}

// A waiter that does not describe its wait is reported by what the
// hardware waits for: here, an event (the one the store sent was lost).
func TestDeadlockNamesHardwareWait(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.e.SetFaults(Faults{LoseWake: 1})
	r.m.Poke(ramBase, 1)
	r.e.Spawn(r.e.Cores()[1], "waiter", func(p *Proc) {
		for p.LoadExclusive(ramBase) != 0 {
			p.WFE()
		}
	})
	r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Store(ramBase, 0) })
	err := r.e.Run(context.Background())
	if want := "waiter (core 1) waits on an event in WFE (SEV or interrupt)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// Pending lines of one level are dispatched lowest-numbered first, or
// highest first on a core configured like ESP-IDF's Xtensa dispatcher.
func TestDispatchOrderWithinLevel(t *testing.T) {
	for _, high := range []bool{false, true} {
		r := newRig(t, 1, false, func(c *CoreConfig) { c.HighLineFirst = high })
		c := r.e.Cores()[0]
		var order []IRQ
		c.SetHandler(func(p *Proc, irq IRQ) { order = append(order, irq) })
		r.e.Spawn(c, "task", func(p *Proc) {
			prev := p.Mask(1)
			c.Raise(6)
			c.Raise(13)
			c.Raise(10)
			p.Restore(prev)
		})
		r.run(t)
		want := []IRQ{6, 10, 13}
		if high {
			want = []IRQ{13, 10, 6}
		}
		if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
			t.Errorf("HighLineFirst=%v: order %v, want %v", high, order, want)
		}
	}
}
