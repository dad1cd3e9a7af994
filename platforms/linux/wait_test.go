package linux_test

import (
	"context"
	"fmt"
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
	// The same for a test-and-set waiter, whose first counted access, the
	// LDXR, follows the prefetch that takes the line back from the releaser.
	eventPrefetch := func(h handoff, t sim.Time) (sim.Time, sim.Time) {
		lo, hi := event(h, t)
		return lo + sameCluster, hi + sameCluster
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
		{name: "test-and-set: the unlocker's SEV", f: linux.TAS, m: linux.WFE, irqsave: true, tweak: noStream, window: eventPrefetch,
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

// A waiter under the adaptive policy, or the tiered one with interrupts
// masked (where schedule() is illegal), polls exactly SpinLimit times
// before it first sleeps in WFE. cpu0 holds the lock from 0 to 500 us with
// no event stream, so nothing wakes cpu1 before the release; cpu1 asks at
// 10 us with interrupts masked. Its accesses to the lock word before the
// release are the flavour's fixed ones plus one load per poll: the ticket
// lock's ticket (an LDXR) and first load; the arm64 ticket lock's too and
// the LDXR arming the monitor; the qspinlock's failed cmpxchg, the LDXR of
// its fetch_or of the pending bit, its first load and the arming LDXR; the
// test-and-set lock's first attempt (each poll being an attempt); the
// test-and-test-and-set lock's first attempt, first load and arming LDXR.
// Its spin residency is the polls: each RelaxCycles and its accesses, all
// hits (a load; the test-and-set lock's LDXR and STXR), then the arming
// LDXR still in the spinning state.
// Kills: sim.WaitPolicy.Polls set to anything but SpinLimit.
func TestPollsBeforeWFE(t *testing.T) {
	const (
		rel  = 500 * sim.Microsecond
		hit  = hitCycles * cycle
		from = 10 * sim.Microsecond
	)
	noStream := func(s *generic.SoC, _ *linux.Config) { s.EventStream = 0 }
	for _, tc := range []struct {
		f     linux.Flavour
		m     linux.Mode
		fixed int // accesses before the release that are not polls
		hits  int // hits per poll
		arm   int // hits after the last poll (the arming LDXR)
	}{
		{linux.Ticket, linux.Adaptive, 2, 1, 0},
		{linux.TicketArm64, linux.Adaptive, 3, 1, 1},
		{linux.QSpinlock, linux.Adaptive, 4, 1, 1},
		{linux.QSpinlock, linux.Tiered, 4, 1, 1},
		{linux.TAS, linux.Adaptive, 1, 2, 0},
		{linux.TAS, linux.Tiered, 1, 2, 0},
		{linux.TTAS, linux.Adaptive, 3, 1, 1},
	} {
		for _, polls := range []int{0, 1, 50} {
			t.Run(fmt.Sprintf("%s/%v/%d", tc.f, tc.m, polls), func(t *testing.T) {
				r := newRig(t, 2, 1, noStream)
				w := wait(tc.m)
				w.SpinLimit = polls
				l, err := r.k.NewSpinlock(tc.f, w)
				if err != nil {
					t.Fatal(err)
				}
				accesses := 0
				r.k.Count = func(cpu int, a sim.Addr) {
					if cpu == 1 && a == l.Word() && r.e.Now() < rel {
						accesses++
					}
				}
				var got sim.Time
				holdUntil(r, l, rel)
				r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
					p.Delay(from)
					flags := linux.SpinLockIRQSave(p, l)
					got = p.Now()
					linux.SpinUnlockIRQRestore(p, l, flags)
				})
				r.run(t)
				c := r.cores[1]
				spin := sim.Time(polls) * (relaxCycles*cycle + sim.Time(tc.hits)*hit)
				if polls > 0 {
					spin += sim.Time(tc.arm) * hit
				}
				if accesses != tc.fixed+polls || c.Residency(sim.StateSpin) != spin || c.Residency(sim.StateWFE) == 0 || got < rel {
					t.Errorf("%d lock-word accesses before the release, spun %v, WFE for %v, acquired at %v; want %d, %v, > 0, after %v",
						accesses, c.Residency(sim.StateSpin), c.Residency(sim.StateWFE), got, tc.fixed+polls, spin, rel)
				}
			})
		}
	}
}

// A tiered waiter with interrupts enabled polls SpinLimit times, then
// sleeps in WFE for exactly WFELimit wake-ups, then calls schedule() once.
// cpu0 holds the lock from 0 to 2 ms (with interrupts masked, so its
// release is not delayed); cpu1 asks at 10 us with plain spin_lock. The
// lock word does not change before the release, so each of cpu1's WFE
// sleeps (__cmpwait's LDXR finds the value it tested, or the arm32 ticket
// lock's plain WFE) ends at the next event-stream tick: those are its only
// wake-ups, and they end its WFE tier 100 us apart, so it spends between
// WFELimit-1 and WFELimit stream periods in WFE. Its spin residency is
// SpinLimit polls of RelaxCycles and a load hit, then the next access
// still spinning: the arming LDXR (with a monitor), or with no WFE tier the
// re-check after queueing for schedule().
// Kills: the WFE tier lasting WFELimit+1 wake-ups (iter <= SpinLimit +
// WFELimit), or none; __cmpwait sleeping only when the word changed
// (ldxr != v: the WFE tier then spins through its iterations).
func TestTieredWFEWakeupsBeforeSchedule(t *testing.T) {
	const (
		rel  = 2 * sim.Millisecond
		hit  = hitCycles * cycle
		from = 10 * sim.Microsecond
	)
	for _, tc := range []struct {
		f   linux.Flavour
		arm int // accesses after the last poll's load that spin: the arming LDXR
	}{
		{linux.QSpinlock, 1},
		{linux.TicketArm64, 1},
		{linux.Ticket, 0},
		{linux.TTAS, 1},
	} {
		for _, wfes := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/%d", tc.f, wfes), func(t *testing.T) {
				r := newRig(t, 2, 1, nil)
				w := wait(linux.Tiered)
				w.WFELimit = wfes
				l, err := r.k.NewSpinlock(tc.f, w)
				if err != nil {
					t.Fatal(err)
				}
				var got sim.Time
				holdUntil(r, l, rel)
				r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
					p.Delay(from)
					l.Lock(p)
					got = p.Now()
					l.Unlock(p)
				})
				r.run(t)
				c := r.cores[1]
				stream, event, irq := c.Wakeups[sim.WakeEventStream], c.Wakeups[sim.WakeEvent], c.Wakeups[sim.WakeInterrupt]
				if s := r.k.CPUs[1].Schedules; s != 1 || stream != wfes || event != 0 || irq != 1 || got < rel {
					t.Errorf("schedule() %d times; woken %d times by the event stream, %d by an event, %d by an interrupt; acquired at %v; "+
						"want schedule() once, %d stream wake-ups, no event, the one IPI, after %v", s, stream, event, irq, got, wfes, rel)
				}
				wfe, lo, hi := c.Residency(sim.StateWFE), sim.Time(0), sim.Time(0)
				if wfes > 0 {
					lo, hi = sim.Time(wfes-1)*eventStream, sim.Time(wfes)*(eventStream+wakeCycles*cycle)
				}
				if wfe < lo || wfe > hi || wfes > 0 && wfe == 0 {
					t.Errorf("in WFE for %v; want in [%v, %v] (%d sleeps)", wfe, lo, hi, wfes)
				}
				polls, tail := sim.Time(w.SpinLimit), sim.Time(tc.arm)
				if wfes == 0 {
					tail = 1 // the re-check after queueing
				}
				if spin, want := c.Residency(sim.StateSpin), polls*(relaxCycles*cycle+hit)+tail*hit; spin != want {
					t.Errorf("spun %v; want %v (%d polls)", spin, want, w.SpinLimit)
				}
			})
		}
	}
}

// Wait.RedundantSEV adds an SEV after every release, which reaches every
// core. qspinlock and the arm64 ticket lock send none of their own, so it
// is what wakes a bystander: cpu1, which never touches the lock, sleeps in
// WFE from 0 while cpu0 takes the lock and releases it at 10 us. With the
// redundant SEV cpu1 wakes by that event (WakeCycles after it), without it
// at the event stream's first tick.
// Kills: release not sending the redundant SEV.
func TestRedundantSEVWakesEveryCore(t *testing.T) {
	const rel = 10 * sim.Microsecond
	for _, f := range []linux.Flavour{linux.QSpinlock, linux.TicketArm64} {
		for _, redundant := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/redundant=%v", f, redundant), func(t *testing.T) {
				r := newRig(t, 2, 1, nil)
				w := wait(linux.WFE)
				w.RedundantSEV = redundant
				l, err := r.k.NewSpinlock(f, w)
				if err != nil {
					t.Fatal(err)
				}
				var cause sim.WakeCause
				var woke sim.Time
				holdUntil(r, l, rel)
				r.e.Spawn(r.cores[1], "bystander", func(p *sim.Proc) {
					cause = p.WFE()
					woke = p.Now()
				})
				r.run(t)
				// The release is a hit on cpu0's own line.
				wantCause, at := sim.WakeEventStream, eventStream
				if redundant {
					wantCause, at = sim.WakeEvent, rel+hitCycles*cycle
				}
				if want := at + wakeCycles*cycle; cause != wantCause || woke != want {
					t.Errorf("bystander woken by %v at %v; want %v at %v", cause, woke, wantCause, want)
				}
			})
		}
	}
}

// On a SoC that loses SEVs (SetLoseSEV(0.5)), the arm32 ticket lock's
// waiter is woken by the release when either its unlock's SEV or the
// redundant one survives, else at the next event-stream tick: with the
// redundant SEV more of 40 hand-offs wake by the event (3 in 4 expected,
// against 1 in 2 without).
// Kills: release not sending the redundant SEV.
func TestRedundantSEVOnLossySoC(t *testing.T) {
	byEvent := func(redundant bool) int {
		r := newRig(t, 2, 3, nil)
		if err := r.k.SetLoseSEV(0.5); err != nil {
			t.Fatal(err)
		}
		w := wait(linux.WFE)
		w.RedundantSEV = redundant
		l, err := r.k.NewSpinlock(linux.Ticket, w)
		if err != nil {
			t.Fatal(err)
		}
		rounds, err := handoffRounds(r, l, 40, true)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, h := range rounds {
			switch {
			case h.got == 0:
				t.Fatalf("redundant %v: round %d never acquired", redundant, i)
			case h.woke <= h.rel+sameCluster+wakeCycles*cycle:
				n++
			case h.woke != next(h.rel, eventStream)+wakeCycles*cycle:
				t.Errorf("redundant %v: round %d released %v, woke %v; want by the SEV or at the next stream tick", redundant, i, h.rel, h.woke)
			}
		}
		return n
	}
	with, without := byEvent(true), byEvent(false)
	t.Logf("hand-offs woken by the SEV: %d of 40 with the redundant SEV, %d without", with, without)
	if with <= without {
		t.Errorf("%d of 40 hand-offs woken by an SEV with the redundant SEV, %d without; want more with (about 30 against 20)", with, without)
	}
}

// A tiered waiter re-checks the lock word after queueing itself for
// schedule() (prepare_to_wait, then the condition), so a release that
// lands between its last check and its queueing is not lost. The window is
// that last check's read: the releasing write takes effect at its issue,
// and its wake_up_var runs when its line transfer completes, finding no
// sleeper if the waiter's read completes later. In sim transfers of a line
// queue in order, so only a hit slower than a line transfer completes
// later: here every hit takes 400 ns, a transfer 100 ns, and a release
// issued up to 300 ns after the waiter's last check would be lost without
// the re-check: nothing wakes the waiter again, and the run ends at its
// time limit.
//
// A probe run, with the lock held 1 ms, finds when cpu1 (plain spin_lock,
// no WFE tier) issues its last check and its re-check, one hit apart. Then
// cpu0 releases at instants around the last check: each time cpu1 must
// acquire, and a release issued while the last check is in flight must be
// seen by the re-check (no schedule(), acquired within a few hits);
// otherwise cpu1 is back within the unlocker's IPI, the switch out and back
// in and the interrupt's costs.
// Kills: the re-check after queueing skipped (a lost wake-up).
func TestTieredRecheckAfterQueueing(t *testing.T) {
	const (
		slowHit = 400 * cycle
		from    = 10 * sim.Microsecond
	)
	slowHits := func(s *generic.SoC, _ *linux.Config) { s.Clusters[0].HitCycles = int64(slowHit / cycle) }
	// run holds the lock from 0 to rel; it returns the times of cpu1's
	// lock-word accesses before it called schedule(), when cpu1 acquired,
	// its schedule() calls and the run's error.
	run := func(f linux.Flavour, rel sim.Time) (checks []sim.Time, got sim.Time, schedules int, err error) {
		r := newRig(t, 2, 1, slowHits)
		w := wait(linux.Tiered)
		w.WFELimit = 0
		l, err := r.k.NewSpinlock(f, w)
		if err != nil {
			t.Fatal(err)
		}
		r.k.Count = func(cpu int, a sim.Addr) {
			if cpu == 1 && a == l.Word() && r.k.CPUs[1].Schedules == 0 && got == 0 {
				checks = append(checks, r.e.Now())
			}
		}
		holdUntil(r, l, rel)
		r.e.Spawn(r.cores[1], "waiter", func(p *sim.Proc) {
			p.Delay(from)
			l.Lock(p)
			got = p.Now()
			l.Unlock(p)
		})
		r.e.Until = 100 * sim.Millisecond
		err = r.e.Run(context.Background())
		if err == nil && r.e.StopReason() != "done" {
			err = fmt.Errorf("run stopped at %v: %s; waiting: %v", r.e.Now(), r.e.StopReason(), r.e.Waiters())
		}
		return checks, got, r.k.CPUs[1].Schedules, err
	}
	irq := (wakeCycles + irqEntry + irqExit) * cycle
	for _, f := range []linux.Flavour{linux.QSpinlock, linux.Ticket} {
		t.Run(string(f), func(t *testing.T) {
			checks, _, schedules, err := run(f, sim.Millisecond)
			if err != nil || schedules != 1 || len(checks) < 2 {
				t.Fatalf("probe: error %v, %d schedule() calls, %d checks; want none, 1, >= 2", err, schedules, len(checks))
			}
			last, recheck := checks[len(checks)-2], checks[len(checks)-1]
			if recheck-last != slowHit {
				t.Errorf("probe: last checks at %v and %v; want a re-check one hit (%v) after the check", last, recheck, slowHit)
			}
			caught := 0
			for d := -slowHit; d <= 2*slowHit; d += slowHit / 8 {
				rel := last + d
				_, got, schedules, err := run(f, rel)
				inFlight := d > 0 && d < slowHit
				var hi sim.Time
				if inFlight {
					hi = rel + 4*slowHit
				} else {
					hi = rel + sameCluster + ipiLatency + 2*switchWork + irq + 4*slowHit
				}
				if err != nil || got < rel || got > hi || inFlight && schedules != 0 {
					t.Errorf("release at %v (%v after the last check): error %v, acquired at %v after %d schedule() calls; want no error, in [%v, %v]",
						rel, d, err, got, schedules, rel, hi)
				}
				if inFlight && err == nil && schedules == 0 {
					caught++
				}
			}
			if caught == 0 {
				t.Errorf("no release landed while the last check was in flight")
			}
		})
	}
}

// holdUntil has cpu0 take l at once, with interrupts masked, and release
// it at rel.
func holdUntil(r rig, l linux.Spinlock, rel sim.Time) {
	r.e.Spawn(r.cores[0], "holder", func(p *sim.Proc) {
		flags := linux.SpinLockIRQSave(p, l)
		p.Delay(rel - p.Now())
		linux.SpinUnlockIRQRestore(p, l, flags)
	})
}
