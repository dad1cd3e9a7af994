package linux_test

import (
	"context"
	"testing"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// next returns the first multiple of period strictly after t: the next
// tick of a grid that starts at 0 (jiffies, the event stream).
func next(t, period sim.Time) sim.Time { return (t/period + 1) * period }

// A waiter wakes by the mechanism its policy relies on, and at the time that
// mechanism gives: cpu1 waits while cpu0 holds the lock 1 to 9 ms, and its
// first lock-code access after the release (its wake) must fall in the
// window of each case, every round. The windows are sums of the test
// machine's costs (rig_test.go); "never" cases must not acquire at all.
func TestWaiterWakes(t *testing.T) {
	// A cleared monitor or an SEV: the waiter leaves WFE (WakeCycles)
	// after at most the release's line transfer.
	event := func(h handoff, _ sim.Time) (sim.Time, sim.Time) {
		return h.rel + wakeCycles*cycle, h.rel + sameCluster + wakeCycles*cycle
	}
	// The unlocker's reschedule IPI ends schedule(): IPI, WFI exit, the IPI
	// handler, the switch back in, after the release's line transfer.
	ipi := func(h handoff, _ sim.Time) (sim.Time, sim.Time) {
		lo := h.rel + ipiLatency + switchWork
		return lo, lo + sameCluster + (wakeCycles+irqEntry+irqExit)*cycle
	}
	// A WFI waiter with interrupts enabled re-checks after each tick's
	// handler (WFI exit, entry, the tick's work, exit): it sees the release
	// after the first tick whose handler ends after it.
	nextTick := func(h handoff, tick sim.Time) (sim.Time, sim.Time) {
		handler := tickWork + (wakeCycles+irqEntry+irqExit)*cycle
		n := next(h.rel-handler, tick)
		return n + tickWork, n + handler
	}
	streamTick := func(h handoff, _ sim.Time) (sim.Time, sim.Time) {
		s := next(h.rel, eventStream)
		return s, s + wakeCycles*cycle
	}
	noStream := func(s *generic.SoC, _ *linux.Config) { s.EventStream = 0 }
	for _, tc := range []struct {
		name      string
		f         linux.Flavour
		m         linux.Mode
		irqsave   bool
		lose      float64 // sim.Faults.LoseWake: SEVs and monitor events
		loseSEV   float64 // Kernel.SetLoseSEV: SEVs only
		tweak     func(*generic.SoC, *linux.Config)
		redundant bool // Wait.RedundantSEV
		// window is where the wake must fall, given the round and the
		// tick period; nil: the waiter must never acquire.
		window func(h handoff, tick sim.Time) (lo, hi sim.Time)
		kills  string // the mutation the case fails on
	}{
		{name: "qspinlock WFE: the release clears the monitor", f: linux.QSpinlock, m: linux.WFE, irqsave: true, window: event,
			kills: "__cmpwait not arming the monitor (the waiter sleeps to the next event-stream tick)"},
		{name: "wake-ups lost: the event stream", f: linux.QSpinlock, m: linux.WFE, irqsave: true, lose: 1,
			window: streamTick, kills: "generic.SoC.CoreConfig dropping EventStream, or another period"},
		{name: "wake-ups lost, no event stream: never", f: linux.QSpinlock, m: linux.WFE, irqsave: true, lose: 1, tweak: noStream,
			kills: "a masked tick waking WFE, or a lost event delivered"},
		{name: "ticket: the unlocker's SEV", f: linux.Ticket, m: linux.WFE, irqsave: true, tweak: noStream, window: event,
			kills: "ticketLock.Unlock without SEV (its plain WFE never wakes)"},
		// The article's fault: the SEV is lost, the monitor works. arm64
		// locks send no SEV, so it cannot touch them; the arm32 ticket
		// lock's plain WFE then waits for the event stream, or forever.
		{name: "SEV lost: ticket waits for the event stream", f: linux.Ticket, m: linux.WFE, irqsave: true, loseSEV: 1, window: streamTick,
			kills: "an SEV delivered despite SetLoseSEV(1)"},
		{name: "SEV lost, no event stream: ticket never", f: linux.Ticket, m: linux.WFE, irqsave: true, loseSEV: 1, tweak: noStream,
			kills: "a lost SEV delivered, or a masked tick waking WFE"},
		{name: "SEV lost: qspinlock unaffected (no SEV)", f: linux.QSpinlock, m: linux.WFE, irqsave: true, loseSEV: 1, tweak: noStream, window: event,
			kills: "SetLoseSEV dropping monitor events"},
		{name: "SEV lost: arm64 ticket unaffected (no SEV)", f: linux.TicketArm64, m: linux.WFE, irqsave: true, loseSEV: 1, tweak: noStream, window: event,
			kills: "the arm64 ticket lock waiting without the monitor, or unlocking with an SEV"},
		{name: "redundant SEV with every SEV lost: ticket still waits for the stream", f: linux.Ticket, m: linux.WFE, irqsave: true, loseSEV: 1,
			redundant: true, window: streamTick, kills: "the redundant SEV escaping SetLoseSEV"},
		// WFET bounds every sleep: with every wake-up lost and no event
		// stream, the waiter sees the release at its next timeout.
		{name: "WFET: the release clears the monitor", f: linux.QSpinlock, m: linux.WFET, irqsave: true, tweak: noStream, window: event,
			kills: "WFET ignoring events"},
		{name: "WFET, wake-ups lost, no event stream: the next timeout", f: linux.QSpinlock, m: linux.WFET, irqsave: true, lose: 1, tweak: noStream,
			window: func(h handoff, _ sim.Time) (sim.Time, sim.Time) {
				return h.rel, h.rel + wfetTimeout + wakeCycles*cycle
			}, kills: "WFET without its timeout (the waiter never wakes)"},
		{name: "test-and-set: the unlocker's SEV", f: linux.TAS, m: linux.WFE, irqsave: true, tweak: noStream, window: event,
			kills: "tasLock.Unlock without SEV"},
		// With NO_HZ_IDLE the waiter's tick restarts on the jiffy grid
		// after each idle spell; without it, it stays on the grid it
		// booted on.
		{name: "WFI, HZ=250: the next 4 ms tick", f: linux.QSpinlock, m: linux.WFI, window: nextTick,
			kills: "the release waking a WFI waiter, or the tick restarting off the jiffy grid after idle"},
		{name: "WFI, HZ=1000, periodic tick: the next 1 ms tick", f: linux.QSpinlock, m: linux.WFI, window: nextTick,
			tweak: func(_ *generic.SoC, c *linux.Config) { c.HZ, c.NoHZIdle = 1000, false },
			kills: "a tick period other than 1/HZ, or ticks booting off the jiffy grid"},
		{name: "WFI, interrupts masked: spins after the first tick", f: linux.QSpinlock, m: linux.WFI, irqsave: true,
			// The first (masked) tick ends the only WFI that sleeps; the
			// release then costs a line transfer, the spinner's re-read
			// and at most one poll period.
			window: func(h handoff, tick sim.Time) (sim.Time, sim.Time) {
				lo := max(h.rel, next(h.try, tick))
				return lo, lo + 2*sameCluster + (relaxCycles+wakeCycles)*cycle
			}, kills: "WFI sleeping on while a masked interrupt is pending (the run never ends)"},
		{name: "tiered qspinlock: schedule() until the unlocker's IPI", f: linux.QSpinlock, m: linux.Tiered, window: ipi,
			kills: "release without waitQueue.wakeOne (never woken), or tier never choosing schedule() (woken too early)"},
		{name: "tiered ticket", f: linux.Ticket, m: linux.Tiered, window: ipi, kills: "the ticket lock not passing its wait queue"},
		{name: "tiered test-and-test-and-set", f: linux.TTAS, m: linux.Tiered, window: ipi, kills: "the TTAS lock not passing its wait queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, 3, tc.tweak)
			if err := r.e.SetFaults(sim.Faults{LoseWake: tc.lose}); err != nil {
				t.Fatal(err)
			}
			if err := r.k.SetLoseSEV(tc.loseSEV); err != nil {
				t.Fatal(err)
			}
			w := wait(tc.m)
			w.RedundantSEV = tc.redundant
			l, err := r.k.NewSpinlock(tc.f, w)
			if err != nil {
				t.Fatal(err)
			}
			rounds, err := handoffRounds(r, l, 20, tc.irqsave)
			if err != nil {
				t.Fatal(err)
			}
			if tc.window == nil {
				if rounds[0].got != 0 || r.e.StopReason() != "time limit" {
					t.Fatalf("acquired at %v (run stopped: %s); want never (kills: %s)", rounds[0].got, r.e.StopReason(), tc.kills)
				}
				return
			}
			// Only the tiered policy sleeps in schedule(), once a round.
			if s := r.k.CPUs[1].Schedules; (tc.m == linux.Tiered) != (s >= len(rounds)) || tc.m != linux.Tiered && s != 0 {
				t.Errorf("cpu1 called schedule() %d times in %d rounds under %v", s, len(rounds), tc.m)
			}
			tick := r.k.Cfg.TickPeriod()
			for i, h := range rounds {
				lo, hi := tc.window(h, tick)
				if h.got == 0 || h.woke < lo || h.woke > hi {
					t.Fatalf("round %d: tried %v, released %v, woke %v, got %v; want wake in [%v, %v] (kills: %s)",
						i, h.try, h.rel, h.woke, h.got, lo, hi, tc.kills)
				}
			}
		})
	}
}

// TestSimMonitorArmedAfterInFlightWrite is a regression test for a sim bug
// that platforms/linux once worked around (an extra re-read in LDXR and an
// atomic add of 0 after every store): a store issued while another core's
// LDXR or SpinUntil read of the same line was still in flight (its DRAM fill
// takes dram) was missed by that core. sim now lets every access take
// effect at its issue and arms the monitor then, and a spinner whose read
// raced a write polls again. The reader's read is issued at 0, the store at
// 10 ns while the fill is in flight.
func TestSimMonitorArmedAfterInFlightWrite(t *testing.T) {
	const a = sim.Addr(0x18000)
	noStream := func(s *generic.SoC, _ *linux.Config) { s.EventStream = 0 }
	start := func(t *testing.T, reader func(p *sim.Proc)) rig {
		r := newRig(t, 2, 1, noStream)
		r.e.Spawn(r.cores[0], "reader", reader)
		r.e.Spawn(r.cores[1], "writer", func(p *sim.Proc) {
			p.Delay(10 * sim.Nanosecond)
			p.Store(a, 1)
		})
		r.e.Until = sim.Millisecond
		if err := r.e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("ldxr+wfe", func(t *testing.T) {
		var v uint64
		var stxr, slept bool
		var cause sim.WakeCause
		r := start(t, func(p *sim.Proc) {
			if v = p.LoadExclusive(a); v == 0 {
				cause, slept = p.WFE(), true // only the store can end this (no stream, no SEV)
			}
			stxr = p.StoreExclusive(a, 2)
		})
		// The read was issued first, so it returns the old value; the
		// store then clears the monitor armed at issue: the WFE is woken
		// by that event and the store-exclusive must fail.
		if v != 0 || !slept || cause != sim.WakeEvent || stxr {
			t.Fatalf("ldxr read %d, WFE ran %v woken by %v, stxr succeeded %v; want 0, true, event, false", v, slept, cause, stxr)
		}
		if got := r.e.Memory().Peek(a); got != 1 {
			t.Fatalf("word = %d after the run, want the store's 1 (the stxr must not land)", got)
		}
	})
	t.Run("spin", func(t *testing.T) {
		var got sim.Time
		start(t, func(p *sim.Proc) {
			p.SpinUntil(a, 20, func(v uint64) bool { return v == 1 })
			got = p.Now()
		})
		// It polls again at once after the raced read: done within the
		// fill, the store's transfer and one loop, far below 1 us.
		if got == 0 || got > dram+sim.Microsecond {
			t.Fatalf("spinner saw the store at %v; want within %v", got, dram+sim.Microsecond)
		}
	})
}
