package sim_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"synclab/sim"
)

// ffMachine builds an engine (seeded with seed) of n cores of cfg and a
// memory of coh holding one region.
func ffMachine(t *testing.T, seed uint64, n int, cfg sim.CoreConfig, coh sim.Coherence, r sim.Region) (*sim.Engine, *sim.Memory) {
	t.Helper()
	e := sim.NewEngine(seed)
	for range n {
		if _, err := e.AddCore(cfg); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(coh)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(r); err != nil {
		t.Fatal(err)
	}
	return e, m
}

// ffSRAM is 64 bytes of uncached SRAM at 0x1000 behind one port.
func ffSRAM(latency, occupancy sim.Time) sim.Region {
	return sim.Region{Name: "sram", Base: 0x1000, Size: 64, Uncached: true, Latency: latency, Occupancy: occupancy}
}

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
	e, m := ffMachine(t, 3, 2, sim.CoreConfig{Name: "c", Hz: 240_000_000, ExecMW: 100, SpinMW: 100, WFEMW: 10, WFIMW: 5,
		IRQEntry: 40, IRQExit: 30, WakeCycles: 10, HitCycles: 1},
		sim.Coherence{LineSize: 64, SameCluster: 40 * sim.Nanosecond},
		sim.Region{Name: "ram", Base: 0x1000, Size: 4096, Uncached: uncached, Latency: 25 * sim.Nanosecond, Occupancy: 10 * sim.Nanosecond})
	const lock, counter = sim.Addr(0x1000), sim.Addr(0x1040)
	cores := e.Cores()
	for _, c := range cores {
		c.SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(120) })
	}
	dev, err := cores[0].NewDevice("timer-group", 3, 37*sim.Microsecond, false)
	if err != nil {
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

// ffLimitOutcome is what a doorbell run exposes: how it ended and the state
// fast-forward must have reproduced.
type ffLimitOutcome struct {
	Err      string
	Now      sim.Time
	Events   uint64
	Progress uint64 // the sender's last loop index, stored in memory
	Taken    int
	Latency  sim.Histogram
	Resid    []sim.Time
}

// ffDoorbell runs a core ringing a doorbell interrupt on its neighbour
// (n iterations of store, ring, 200 cycles at 240 MHz), with the engine's
// limits set by limit, and reports what the run exposes. bells > 1 rings
// through a ring of that many reusable doorbell events, each due far
// after the loop has gone round again, so that events pending at a loop
// head reach several periods ahead.
func ffDoorbell(t *testing.T, fast bool, n, bells int, ring sim.Time, limit func(*sim.Engine)) (ffLimitOutcome, sim.FastForwardStats) {
	t.Helper()
	e, m := ffMachine(t, 1, 2, sim.CoreConfig{Name: "lx6", Hz: 240_000_000, ExecMW: 100, WFIMW: 5, IRQEntry: 40, IRQExit: 30},
		sim.Coherence{LineSize: 8}, ffSRAM(25*sim.Nanosecond, 10*sim.Nanosecond))
	const mailbox = sim.Addr(0x1000)
	cores := e.Cores()
	cores[1].SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(20) })
	var bell []*sim.Event
	for range bells {
		bell = append(bell, sim.NewEvent(func() { cores[1].Raise(2) }, false))
	}
	cores[1].Start(e.NewProc("idle", true, func(p *sim.Proc) {
		for range p.Loop(-1) {
			p.WFI()
		}
	}))
	e.Spawn(cores[0], "sender", func(p *sim.Proc) {
		for i := range p.Loop(n) {
			p.Store(mailbox, uint64(i))
			e.After(ring, bell[i%bells])
			p.Compute(200)
		}
	})
	if fast {
		e.EnableFastForward()
	}
	limit(e)
	var o ffLimitOutcome
	if err := e.Run(context.Background()); err != nil {
		var re *sim.RunawayError
		if !errors.As(err, &re) {
			t.Fatal(err)
		}
		o.Err = fmt.Sprintf("runaway at %v after %d events", re.At, re.Events)
	}
	o.Now, o.Events, o.Progress = e.Now(), e.Events(), m.Peek(mailbox)
	o.Taken, o.Latency = cores[1].IRQsTaken, *cores[1].IRQLatency(2)
	for _, c := range cores {
		for s := range c.States() {
			o.Resid = append(o.Resid, c.Residency(sim.State(s)))
		}
	}
	return o, e.FastForward()
}

// TestFastForwardHonoursLimits: a fast-forwarded run stops where the
// detailed run stops, at the time limit (Until) and at the event budget
// (MaxEvents, a RunawayError at the same time and count), with the same
// state, having skipped most of the way there; with doorbells pending
// several periods ahead, a jump stops before a timer that does not move
// with the period as the detailed run does. Nothing else bounds these
// runs' jumps (no tick, a loop far longer than the run), so a jump that
// ignored a limit would overshoot it by most of the loop.
func TestFastForwardHonoursLimits(t *testing.T) {
	const n = 200_000 // ~167 ms of iterations; every run below ends long before
	for _, tc := range []struct {
		name  string
		bells int
		ring  sim.Time
		limit func(*sim.Engine)
		err   bool
	}{
		{"until", 1, 100 * sim.Nanosecond, func(e *sim.Engine) { e.Until = 3*sim.Millisecond + 417 }, false},
		{"max-events", 1, 100 * sim.Nanosecond, func(e *sim.Engine) { e.MaxEvents = 20_011 }, true},
		{"until-far-bells", 4, 2900 * sim.Nanosecond, func(e *sim.Engine) { e.Until = 5*sim.Millisecond + 3 }, false},
		{"timer-far-bells", 4, 2900 * sim.Nanosecond, func(e *sim.Engine) {
			e.Until = 9 * sim.Millisecond
			e.Cores()[0].NewTimer(3).OneShot(4*sim.Millisecond + 1234)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow, _ := ffDoorbell(t, false, n, tc.bells, tc.ring, tc.limit)
			fast, st := ffDoorbell(t, true, n, tc.bells, tc.ring, tc.limit)
			if (slow.Err != "") != tc.err || slow.Progress >= n-1 {
				t.Fatalf("detailed run: error %q, progress %d: want the limit to end it", slow.Err, slow.Progress)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast-forwarded run differs:\nfast %+v\nslow %+v", fast, slow)
			}
			if st.Time < slow.Now/2 {
				t.Fatalf("skipped %v of %v (%+v): the test would prove little", st.Time, slow.Now, st)
			}
		})
	}
}

// ffPair runs two cores for about 2 ms of 1 us periods and reports the run
// and what fast-forward skipped: core 0 runs body0, core 1 a Loop of
// 1000-cycle Computes.
func ffPair(t *testing.T, fast bool, body0 func(e *sim.Engine, m *sim.Memory, p *sim.Proc)) (ffPairOutcome, sim.FastForwardStats) {
	t.Helper()
	e, m := ffMachine(t, 1, 2, sim.CoreConfig{Name: "c", Hz: 1_000_000_000, ExecMW: 100, WFIMW: 5, IRQEntry: 10, IRQExit: 10},
		sim.Coherence{LineSize: 8}, ffSRAM(5*sim.Nanosecond, 2*sim.Nanosecond))
	cores := e.Cores()
	cores[0].SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(7) })
	e.Spawn(cores[0], "body", func(p *sim.Proc) { body0(e, m, p) })
	e.Spawn(cores[1], "looper", func(p *sim.Proc) {
		for range p.Loop(2000) {
			p.Compute(1000)
		}
	})
	if fast {
		e.EnableFastForward()
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := ffPairOutcome{Now: e.Now(), Events: e.Events(), Word: m.Peek(0x1000), Latency: *cores[0].IRQLatency(2)}
	return o, e.FastForward()
}

// ffPairOutcome is what an ffPair run exposes.
type ffPairOutcome struct {
	Now     sim.Time
	Events  uint64
	Word    uint64
	Latency sim.Histogram
}

// TestFastForwardRefusesWhatItCannotSee: two workloads that look periodic
// to every recorded number but are not, so fast-forward must not skip
// (and the fast run must equal the detailed one):
//   - a process that runs in every period without a loop head, counting
//     in a Go local the snapshot cannot see (in step with the other core's
//     loop, so only the rule that a process which ran must have passed a
//     loop head stops the match; a skip would leave it all its iterations
//     still to run);
//   - a process whose interrupt latency grows by one cycle per period,
//     so its latency histogram gains one value per period, but never the
//     same one (only the check that each period adds the same values stops
//     the match).
//
// Each changes a word in every period (a store of the value already there
// is no change): a period in which nothing changes is refused as a livelock
// before these checks are reached.
func TestFastForwardRefusesWhatItCannotSee(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(e *sim.Engine, m *sim.Memory, p *sim.Proc)
	}{
		{"no-loop-head", func(e *sim.Engine, m *sim.Memory, p *sim.Proc) {
			for i := 0; i < 2000; i++ { // a plain Go loop: i is invisible
				p.Compute(995)
				p.Store(0x1008, uint64(i%2)) // 5 ns: the looper's 1,000 ns per period
			}
			p.Store(0x1000, 1)
		}},
		{"latency-drifts", func(e *sim.Engine, m *sim.Memory, p *sim.Proc) {
			for i := range p.Loop(2000) {
				prev := p.Mask(1)
				p.Core().Raise(2)
				p.Compute(int64(i % 900)) // masked: the interrupt waits i cycles
				p.Restore(prev)
				p.Compute(995 - int64(i%900))
				p.Store(0x1008, uint64(i%2))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow, _ := ffPair(t, false, tc.body)
			fast, st := ffPair(t, true, tc.body)
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast-forwarded run differs:\nfast %+v\nslow %+v", fast, slow)
			}
			if st.Skips != 0 {
				t.Fatalf("skipped %+v of a run that is not periodic", st)
			}
			if st.Snapshots == 0 {
				t.Fatal("no state taken: the test would prove nothing")
			}
		})
	}
}

// TestFastForwardNestedLoop: each of two cores holds a lock across its loop
// head and takes it back with a retry loop of its own (a nested Proc.Loop,
// as a blocking kernel call has), so at every loop head the other process
// is inside a retry loop that began after the last period. Fast-forward
// still matches the periods (a nested loop is known by its place, not its
// address) and ends in the detailed run's state.
func TestFastForwardNestedLoop(t *testing.T) {
	run := func(fast bool) (sim.Time, uint64, []sim.Time, sim.FastForwardStats) {
		e, _ := ffMachine(t, 1, 2, sim.CoreConfig{Name: "c", Hz: 240_000_000, ExecMW: 100, SpinMW: 100, WFIMW: 5, HitCycles: 1},
			sim.Coherence{LineSize: 64, SameCluster: 40 * sim.Nanosecond},
			sim.Region{Name: "ram", Base: 0x1000, Size: 4096, Uncached: true, Latency: 25 * sim.Nanosecond})
		const lock = sim.Addr(0x1000)
		for _, c := range e.Cores() {
			id := uint64(c.ID + 1)
			take := func(p *sim.Proc) {
				for range p.Loop(-1) {
					if _, ok := p.CAS(lock, 0, id); ok {
						return
					}
					p.Compute(3)
				}
			}
			e.Spawn(c, "worker", func(p *sim.Proc) {
				take(p)
				for range p.Loop(2000) {
					// The count is not read here: a value read before the
					// retry loop is part of what the waiter has seen.
					p.Compute(50)
					p.Store(lock, 0)
					p.Compute(5)
					take(p)
				}
				p.Store(lock, 0)
			})
		}
		if fast {
			e.EnableFastForward()
		}
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		var spun []sim.Time
		for _, c := range e.Cores() {
			spun = append(spun, c.Residency(sim.StateSpin))
		}
		return e.Now(), e.Events(), spun, e.FastForward()
	}
	now, events, spun, _ := run(false)
	fnow, fevents, fspun, st := run(true)
	if fnow != now || fevents != events || !reflect.DeepEqual(fspun, spun) {
		t.Fatalf("detailed: %v, %d events, spinning %v; fast-forwarded: %v, %d events, spinning %v", now, events, spun, fnow, fevents, fspun)
	}
	if st.Time < now/2 {
		t.Fatalf("skipped %v of %v (%+v), want most of the run", st.Time, now, st)
	}
	t.Logf("%+v of %v", st, now)
}

// TestFastForwardMidCompute: at every loop head of one core the other is
// in the middle of a Compute, interrupted at its start by an interrupt
// whose handler computes too (a nested Compute). The work left of each is
// state the process keeps, not a local, so the periods still match, and
// the run ends in the detailed run's state.
func TestFastForwardMidCompute(t *testing.T) {
	body := func(e *sim.Engine, m *sim.Memory, p *sim.Proc) {
		for i := range p.Loop(1900) {
			p.Store(0x1000, uint64(i))
			p.Core().Raise(2)        // taken as the Compute begins: 10 + 7 + 10 cycles
			p.Compute(1000 - 5 - 27) // with the store, a period of 1000 cycles
		}
	}
	slow, _ := ffPair(t, false, body)
	fast, st := ffPair(t, true, body)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast-forwarded run differs:\nfast %+v\nslow %+v", fast, slow)
	}
	if slow.Latency.Count() != 1900 {
		t.Fatalf("%d interrupts taken, want one per iteration", slow.Latency.Count())
	}
	if st.Time < slow.Now/2 {
		t.Fatalf("skipped %v of %v (%+v), want most of the run", st.Time, slow.Now, st)
	}
	t.Logf("%+v of %v", st, slow.Now)
}

// TestFastForwardPacer: after a jump only the loop heads of the process it
// was made from take states, and when that process stops looping (it
// finishes) every head takes them again. Four cores each store their
// iteration count through one memory port and compute; a device
// interrupts core 1 every 37 us, so the run goes on in detail after each
// jump. Only worker 0 loops for the first 50 us, so the first jump is made
// from its head; it finishes after 400 iterations, a tenth of the others'.
// The run ends in the detailed run's state; while worker 0 lives, states
// are taken at its heads alone, and the others' periods are still skipped
// after it finished.
func TestFastForwardPacer(t *testing.T) {
	type state struct {
		proc string
		at   sim.Time
	}
	run := func(fast bool) (sim.Time, uint64, uint64, []state, sim.FastForwardStats) {
		e, m := ffMachine(t, 1, 4, sim.CoreConfig{Name: "c", Hz: 240_000_000, ExecMW: 100, WFIMW: 5, IRQEntry: 40, IRQExit: 30},
			sim.Coherence{LineSize: 8}, ffSRAM(25*sim.Nanosecond, 10*sim.Nanosecond))
		cores := e.Cores()
		cores[1].SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(20) })
		if _, err := cores[1].NewDevice("timer-group", 3, 37*sim.Microsecond, false); err != nil {
			t.Fatal(err)
		}
		for i, c := range cores {
			n, start := 4000, 50*sim.Microsecond
			if i == 0 {
				n, start = 400, 0
			}
			word := sim.Addr(0x1000 + 8*i)
			e.Spawn(c, fmt.Sprint("worker", i), func(p *sim.Proc) {
				p.Delay(start)
				for i := range p.Loop(n) {
					p.Store(word, uint64(i+1)) // through the one port the others use
					p.Compute(100)
				}
			})
		}
		var states []state
		if fast {
			e.EnableFastForward(snapshotFunc(func(*sim.Snapshot) { states = append(states, state{e.Running().Name, e.Now()}) }))
		}
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		var count uint64
		for i := range 4 {
			count += m.Peek(sim.Addr(0x1000 + 8*i))
		}
		return e.Now(), e.Events(), count, states, e.FastForward()
	}
	now, events, count, _, _ := run(false)
	fnow, fevents, fcount, states, st := run(true)
	if fnow != now || fevents != events || fcount != count {
		t.Fatalf("detailed: %v, %d events, count %d; fast-forwarded: %v, %d events, count %d", now, events, count, fnow, fevents, fcount)
	}
	// Worker 0's last head: the last state taken at its heads.
	var end sim.Time
	for _, s := range states {
		if s.proc == "worker0" {
			end = s.at
		}
	}
	var others int
	for _, s := range states {
		if s.at > 50*sim.Microsecond && s.at < end && s.proc != "worker0" {
			others++
		}
	}
	if others > 0 {
		t.Errorf("%d states taken at other heads while worker 0 paced the run", others)
	}
	if end <= 50*sim.Microsecond || st.Time < (now-end)/2 {
		t.Errorf("worker 0's last state at %v; skipped %v of %v (%+v), want most of what followed", end, st.Time, now, st)
	}
	t.Logf("%+v of %v; worker 0 took its last state at %v", st, now, end)
}

// snapshotFunc is a Snapshotter that records nothing and calls f.
type snapshotFunc func(*sim.Snapshot)

func (f snapshotFunc) Snapshot(s *sim.Snapshot) { f(s) }

// ffLevel is a model's count that only a device's interrupts move (as an
// OS counts its ticks): an epoch, on which the workload's period depends.
type ffLevel struct{ n int }

func (l *ffLevel) Snapshot(s *sim.Snapshot) { s.Epoch(uint64(l.n)) }

// ffLevelOutcome is what a level run exposes.
type ffLevelOutcome struct {
	Now     sim.Time
	Events  uint64
	Last    uint64
	Level   int
	Resid   []sim.Time
	Latency sim.Histogram
}

// ffLevelRun runs on one core, 20,000 times, a store of the iteration
// and then body, with a device interrupt every 37 µs whose handler raises
// the level (interrupt 3; the handler of interrupt 2 only returns).
func ffLevelRun(t *testing.T, fast bool, looper int64, body func(p *sim.Proc, lvl *ffLevel, i int)) (ffLevelOutcome, sim.FastForwardStats) {
	t.Helper()
	// 250 MHz: a cycle is 4 ns exactly, so that the lengths of a period's
	// parts add up to the same time whatever they are.
	e, m := ffMachine(t, 1, 2, sim.CoreConfig{Name: "c", Hz: 250_000_000, ExecMW: 100, WFIMW: 5, IRQEntry: 40, IRQExit: 30},
		sim.Coherence{LineSize: 8}, ffSRAM(24*sim.Nanosecond, 8*sim.Nanosecond))
	const word = sim.Addr(0x1000)
	lvl := &ffLevel{}
	core := e.Cores()[0]
	core.SetHandler(func(p *sim.Proc, irq sim.IRQ) {
		if irq == 3 {
			lvl.n++
			p.Compute(50)
		}
	})
	if _, err := core.NewDevice("dev", 3, 37*sim.Microsecond, false); err != nil {
		t.Fatal(err)
	}
	e.Spawn(core, "worker", func(p *sim.Proc) {
		for i := range p.Loop(20_000) {
			p.Store(word, uint64(i))
			body(p, lvl, i)
		}
	})
	if looper > 0 {
		e.Spawn(e.Cores()[1], "looper", func(p *sim.Proc) {
			for range p.Loop(20_000) {
				p.Compute(looper)
			}
		})
	}
	if fast {
		e.EnableFastForward(lvl)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := ffLevelOutcome{Now: e.Now(), Events: e.Events(), Last: m.Peek(word), Level: lvl.n, Latency: *core.IRQLatency(2)}
	for s := range core.States() {
		o.Resid = append(o.Resid, core.Residency(sim.State(s)))
	}
	return o, e.FastForward()
}

// TestFastForwardRecall: after each device interrupt the loop settles
// into a steady state whose keys are those of the others (the level is an
// epoch). A jump recalls a known step only when the state has moved by
// that very step over one period, and no period that moves an epoch is
// skipped. Each fast-forwarded run ends in the detailed run's state.
//   - steps: the period's length depends on the level (mod 3), so a
//     state's first period after an interrupt often matches a known shape
//     with another level's step; the steady state recalls its own.
//   - latency: every period takes the same time, but at odd levels the
//     latency of an interrupt the loop raises while masked grows by a
//     cycle a period (beside a core looping in step, at whose loop heads
//     states are taken too): those stretches are never skipped, the others
//     recall their step.
//   - epoch-drifts: the loop moves the epoch itself in every period.
func TestFastForwardRecall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		looper int64
		body   func(p *sim.Proc, lvl *ffLevel, i int)
		recall bool
	}{
		{"steps", 0, func(p *sim.Proc, lvl *ffLevel, i int) { p.Compute(100 + 40*int64(lvl.n%3)) }, true},
		{"latency", 276, func(p *sim.Proc, lvl *ffLevel, i int) {
			wait := int64(10)
			if lvl.n%2 == 1 {
				wait += int64(i % 90)
			}
			prev := p.Mask(1)
			p.Core().Raise(2)
			p.Compute(wait) // masked: the interrupt waits that long
			p.Restore(prev)
			p.Compute(200 - wait)
		}, true},
		{"epoch-drifts", 0, func(p *sim.Proc, lvl *ffLevel, i int) {
			p.Compute(100 + 40*int64(lvl.n%3))
			lvl.n++
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow, _ := ffLevelRun(t, false, tc.looper, tc.body)
			fast, st := ffLevelRun(t, true, tc.looper, tc.body)
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast-forwarded run differs:\nfast %+v\nslow %+v", fast, slow)
			}
			if slow.Last != 19_999 || slow.Level < 3 {
				t.Fatalf("last store %d, level %d: want 19999, and three levels at least", slow.Last, slow.Level)
			}
			switch {
			case tc.recall && (st.Recalled == 0 || st.Recalled == st.Skips):
				t.Fatalf("%+v: want jumps both recalled and found (each steady state's first)", st)
			case !tc.recall && st.Skips != 0:
				t.Fatalf("skipped %+v, with an epoch that moves in every period", st)
			}
			t.Logf("%+v of %v", st, slow.Now)
		})
	}
}
