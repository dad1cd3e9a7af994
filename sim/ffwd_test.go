package sim_test

import (
	"context"
	"reflect"
	"testing"

	"synclab/sim"
)

// ffOutcome is everything a run exposes that fast-forward must reproduce.
type ffOutcome struct {
	Now     sim.Time
	Events  uint64
	Counter uint64
	Misses  uint64
	Resid   [][]sim.Time
	Stall   []sim.Time
	Wakeups [][6]int
	Taken   []int
	Latency []sim.Histogram
	Fired   int
}

// ffRun runs two cores that take turns on a lock guarding a counter, with a
// periodic device interrupt on core 0 and a tick on core 1, and reports
// what the run exposes.
func ffRun(t *testing.T, fast, uncached, wfe bool) (ffOutcome, sim.FastForwardStats) {
	t.Helper()
	e := sim.NewEngine(3)
	for i := 0; i < 2; i++ {
		if _, err := e.AddCore(sim.CoreConfig{Name: "c", Hz: 240_000_000, ExecMW: 100, SpinMW: 100, WFEMW: 10, WFIMW: 5,
			IRQEntry: 40, IRQExit: 30, WakeCycles: 10, HitCycles: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(sim.Coherence{LineSize: 64, SameCluster: 40 * sim.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(sim.Region{Name: "ram", Base: 0x1000, Size: 4096, Uncached: uncached,
		Latency: 25 * sim.Nanosecond, Occupancy: 10 * sim.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	const lock, counter = sim.Addr(0x1000), sim.Addr(0x1040)
	cores := e.Cores()
	for _, c := range cores {
		c.SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(120) })
	}
	var dev *sim.Device
	if dev, err = cores[0].NewDevice("timer-group", 3, 37*sim.Microsecond, false); err != nil {
		t.Fatal(err)
	}
	if err := cores[1].NewTimer(5).Periodic(100*sim.Microsecond, 61*sim.Microsecond); err != nil {
		t.Fatal(err)
	}
	// Core 1 signals core 0 after every release (a reusable event, as a
	// doorbell register would be): an interrupt in every period, so its
	// latency log grows with the periods skipped.
	bell := sim.NewEvent(func() { cores[0].Raise(7) }, false)
	for _, c := range cores {
		id := uint64(c.ID + 1)
		e.Spawn(c, "worker", func(p *sim.Proc) {
			for range p.Loop(3000) {
				if wfe {
					for p.LoadExclusive(lock) != 0 || !p.StoreExclusive(lock, id) {
						p.WFE()
					}
				} else {
					p.SpinCAS(lock, 0, id, 3)
				}
				v := p.Load(counter) // held across the Compute: compared, never extrapolated
				p.Compute(5)
				p.Store(counter, v+1)
				p.Store(lock, 0)
				if c.ID == 1 && !bell.Pending() {
					e.After(90*sim.Nanosecond, bell)
				}
				p.Compute(20 + int64(c.ID)*7)
			}
		})
	}
	if fast {
		e.EnableFastForward()
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := ffOutcome{Now: e.Now(), Events: e.Events(), Counter: m.Peek(counter), Misses: m.Misses(lock), Fired: dev.Fired}
	for _, c := range cores {
		var r []sim.Time
		for s := range c.States() {
			r = append(r, c.Residency(sim.State(s)))
		}
		o.Resid = append(o.Resid, r)
		o.Stall = append(o.Stall, c.Stall)
		o.Wakeups = append(o.Wakeups, c.Wakeups)
		o.Taken = append(o.Taken, c.IRQsTaken)
		for _, irq := range []sim.IRQ{3, 5, 7} {
			o.Latency = append(o.Latency, *c.IRQLatency(irq))
		}
	}
	return o, e.FastForward()
}

// TestFastForwardExact: a fast-forwarded run ends in the very state the
// detailed run ends in, and it did skip.
func TestFastForwardExact(t *testing.T) {
	for _, tc := range []struct {
		name          string
		uncached, wfe bool
	}{{"uncached-cas", true, false}, {"cached-cas", false, false}, {"cached-wfe", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			slow, _ := ffRun(t, false, tc.uncached, tc.wfe)
			fast, st := ffRun(t, true, tc.uncached, tc.wfe)
			if slow.Counter != 6000 {
				t.Fatalf("counter %d, want 6000", slow.Counter)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast-forwarded run differs:\nfast %+v\nslow %+v", fast, slow)
			}
			if st.Skips == 0 || st.Time <= 0 {
				t.Fatalf("nothing skipped (%+v): the test would prove nothing", st)
			}
			t.Logf("%+v of %v", st, slow.Now)
		})
	}
}
