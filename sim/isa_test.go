package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Swap returns the previous value and writes like a store: it ends a
// spinner's wait and clears other cores' exclusive monitors on the line
// (waking their WFE).
func TestSwap(t *testing.T) {
	r := newRig(t, 3, false, nil)
	c2 := r.e.Cores()[2]
	r.m.Poke(ramBase, 1)
	var prev, spun uint64
	var spunAt, wokeAt Time
	var cause WakeCause
	r.e.Spawn(r.e.Cores()[1], "spinner", func(p *Proc) {
		spun = p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
		spunAt = p.Now()
	})
	r.e.Spawn(c2, "waiter", func(p *Proc) {
		p.LoadExclusive(ramBase + 8) // same line
		cause = p.WFE()
		wokeAt = p.Now()
	})
	r.e.Spawn(r.e.Cores()[0], "swapper", func(p *Proc) {
		p.Delay(Microsecond)
		prev = p.Swap(ramBase, 0)
	})
	r.run(t)
	if prev != 1 || r.m.Peek(ramBase) != 0 {
		t.Errorf("Swap returned %d and left %d, want 1 and 0", prev, r.m.Peek(ramBase))
	}
	if spun != 0 || spunAt <= Microsecond {
		t.Errorf("spinner saw %d at %v, want 0 after the swap at 1us", spun, spunAt)
	}
	if cause != WakeEvent || wokeAt <= Microsecond || c2.monReg != nil {
		t.Errorf("WFE waiter woke by %v at %v (monitor cleared: %v), want an event after 1us", cause, wokeAt, c2.monReg == nil)
	}
}

// ClearExclusive clears the core's monitor: the next StoreExclusive fails
// and writes nothing; without it the same sequence succeeds.
func TestClearExclusive(t *testing.T) {
	for _, clear := range []bool{false, true} {
		r := newRig(t, 1, false, nil)
		r.m.Poke(ramBase, 1)
		var ok bool
		r.e.Spawn(r.e.Cores()[0], "task", func(p *Proc) {
			p.LoadExclusive(ramBase)
			if clear {
				p.ClearExclusive()
			}
			ok = p.StoreExclusive(ramBase, 5)
		})
		r.run(t)
		want, wantV := !clear, uint64(5)
		if clear {
			wantV = 1
		}
		if ok != want || r.m.Peek(ramBase) != wantV {
			t.Errorf("ClearExclusive %v: StoreExclusive = %v leaving %d, want %v leaving %d", clear, ok, r.m.Peek(ramBase), want, wantV)
		}
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

// WFET wakes at its deadline (WakeTimer, counted) when nothing else comes
// first, plus the wake-up cycles; an event, or the event stream if it comes
// first, ends it earlier with that cause; a deadline already passed returns
// at once without sleeping.
func TestWFET(t *testing.T) {
	const wake = 5 * Nanosecond // WakeCycles at 1 GHz
	for _, tc := range []struct {
		name     string
		stream   Time // event stream period (0: off)
		store    Time // another core writes the monitored line at (0: never)
		deadline Time
		cause    WakeCause
		at       Time
		wfeResid bool
	}{
		{name: "deadline, no stream", deadline: 10 * Microsecond, cause: WakeTimer, at: 10*Microsecond + wake, wfeResid: true},
		{name: "deadline before the stream", stream: 100 * Microsecond, deadline: 10 * Microsecond, cause: WakeTimer, at: 10*Microsecond + wake, wfeResid: true},
		{name: "stream before the deadline", stream: 4 * Microsecond, deadline: 10 * Microsecond, cause: WakeEventStream, at: 4*Microsecond + wake, wfeResid: true},
		{name: "monitor cleared first", store: 2 * Microsecond, deadline: 10 * Microsecond, cause: WakeEvent, at: 2*Microsecond + wake, wfeResid: true},
		{name: "deadline passed", deadline: 0, cause: WakeTimer, at: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, false, func(c *CoreConfig) { c.EventStream = tc.stream })
			r.m.Poke(ramBase, 1) // the first touch is not a DRAM fill mid-test
			var cause WakeCause
			var at, start Time
			r.e.Spawn(r.e.Cores()[0], "waiter", func(p *Proc) {
				p.Load(ramBase)
				p.LoadExclusive(ramBase)
				start = p.Now()
				cause = p.WFET(start + tc.deadline)
				at = p.Now() - start
			})
			if tc.store > 0 {
				r.e.Spawn(r.e.Cores()[1], "writer", func(p *Proc) {
					p.Delay(tc.store)
					p.Store(ramBase, 2)
				})
			}
			r.run(t)
			c := r.e.Cores()[0]
			// The event of a store lands a line transfer after its issue.
			lo, hi := tc.at, tc.at
			if tc.cause == WakeEvent {
				lo, hi = tc.store-start+wake, tc.store-start+sameLat+wake
			}
			if tc.cause == WakeEventStream {
				// The stream ticks on its own grid, not from start.
				lo, hi = 0, tc.stream+wake
			}
			if cause != tc.cause || at < lo || at > hi || (c.Residency(StateWFE) > 0) != tc.wfeResid {
				t.Errorf("woke by %v after %v (WFE residency %v); want %v in [%v, %v], slept %v", cause, at, c.Residency(StateWFE), tc.cause, lo, hi, tc.wfeResid)
			}
			if tc.cause == WakeTimer && tc.wfeResid && c.Wakeups[WakeTimer] != 1 {
				t.Errorf("Wakeups[WakeTimer] = %d, want 1 (the timeout is counted)", c.Wakeups[WakeTimer])
			}
		})
	}
}

// The event stream ticks every EventStream from EventPhase, and a WFE
// sleeps until the next tick strictly after it starts: one that starts on a
// tick sleeps a whole period (that tick's event has gone by). Kills
// nextStreamTick returning the current instant.
func TestEventStreamNextTick(t *testing.T) {
	const per, phase, wake = 10 * Microsecond, 3 * Microsecond, 5 * Nanosecond
	for _, tc := range []struct {
		start, tick Time
	}{
		{start: 0, tick: phase},
		{start: 5 * Microsecond, tick: 13 * Microsecond},
		{start: 13 * Microsecond, tick: 23 * Microsecond}, // on a tick: the next one
		{start: 23*Microsecond - Nanosecond, tick: 23 * Microsecond},
	} {
		r := newRig(t, 1, false, func(c *CoreConfig) { c.EventStream, c.EventPhase = per, phase })
		var cause WakeCause
		var at Time
		r.e.Spawn(r.e.Cores()[0], "waiter", func(p *Proc) {
			p.Delay(tc.start)
			cause = p.WFE()
			at = p.Now()
		})
		r.run(t)
		if cause != WakeEventStream || at != tc.tick+wake {
			t.Errorf("WFE from %v: woke by %v at %v, want the stream at %v (+%v to wake)", tc.start, cause, at, tc.tick, wake)
		}
	}
}

// An LL/SC update of a line another core wrote costs two transfers without
// a prefetch (LDXR takes the line shared, STXR upgrades it) and one with
// PrefetchStore (Linux's prfm pstl1strm), whose LDXR and STXR then hit; a
// prefetch of a line the core owns, or of uncached memory, costs no wait.
// A prefetch of a line the core already shares (it read the line first)
// does nothing, so STXR still upgrades it, unless the core has
// PrefetchUpgrade. The other core's monitor on the line is cleared by the
// store, not by the prefetch that takes its copy.
func TestPrefetchStore(t *testing.T) {
	const hit = Nanosecond // HitCycles 1 at 1 GHz
	for _, tc := range []struct {
		name               string
		uncached, prefetch bool
		again              bool // a second prefetch of the now-owned line
		shared             bool // the updater reads the line before its prefetch
		upgrade            bool // CoreConfig.PrefetchUpgrade
		want               Time
	}{
		{name: "ldxr-stxr", want: 2 * sameLat},
		{name: "prefetch", prefetch: true, want: sameLat + 2*hit},
		{name: "prefetch-owned", prefetch: true, again: true, want: sameLat + 2*hit},
		{name: "prefetch-uncached", uncached: true, prefetch: true, want: 2 * dramLat},
		{name: "prefetch-upgrade-miss", prefetch: true, upgrade: true, want: sameLat + 2*hit},
		{name: "prefetch-shared-hit", prefetch: true, shared: true, want: sameLat + hit + sameLat},
		{name: "prefetch-shared-upgrade", prefetch: true, shared: true, upgrade: true, want: sameLat + sameLat + 2*hit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, tc.uncached, func(c *CoreConfig) { c.PrefetchUpgrade = tc.upgrade })
			var took Time
			var monitorAfterPrefetch bool
			c0 := r.e.Cores()[0]
			r.e.Spawn(c0, "watcher", func(p *Proc) {
				p.Store(ramBase, 1)
				p.LoadExclusive(ramBase) // armed, as a waiter's __cmpwait
				p.Delay(10 * Microsecond)
			})
			r.e.Spawn(r.e.Cores()[1], "updater", func(p *Proc) {
				p.Delay(Microsecond)
				start := p.Now()
				if tc.shared {
					p.Load(ramBase)
				}
				if tc.prefetch {
					p.PrefetchStore(ramBase)
					if tc.again {
						p.PrefetchStore(ramBase)
					}
					monitorAfterPrefetch = c0.monReg != nil
				}
				for {
					v := p.LoadExclusive(ramBase)
					if p.StoreExclusive(ramBase, v+1) {
						break
					}
				}
				took = p.Now() - start
			})
			r.run(t)
			if r.m.Peek(ramBase) != 2 || took != tc.want {
				t.Errorf("the update left %d and took %v, want 2 and %v", r.m.Peek(ramBase), took, tc.want)
			}
			if tc.prefetch && !tc.uncached && (!monitorAfterPrefetch || c0.monReg != nil) {
				t.Errorf("watcher's monitor after the prefetch: %v, after the store: %v; want armed, then cleared", monitorAfterPrefetch, c0.monReg != nil)
			}
		})
	}
}

// TestMonitorLoss: a WFE waiter's monitor is cleared, and the waiter woken,
// by a store to its line always, and by another core taking the line for
// writing without a store (a prefetch for store, a failed CAS) only with
// Coherence.MonitorLoss; a read that shares the line never clears it.
func TestMonitorLoss(t *testing.T) {
	const (
		wake  = 5 * Nanosecond               // WakeCycles 5 at 1 GHz
		woken = Microsecond + sameLat + wake // when the other core has the line
		// The store at 5 µs that ends every case: a hit when the other
		// core owns the line already, else a transfer.
		lateOwned  = 5*Microsecond + Nanosecond + wake
		lateShared = 5*Microsecond + sameLat + wake
	)
	for _, tc := range []struct {
		name string
		op   func(p *Proc)
		loss bool
		want Time
	}{
		{"store", func(p *Proc) { p.Store(ramBase, 2) }, false, woken},
		{"store/loss", func(p *Proc) { p.Store(ramBase, 2) }, true, woken},
		{"prefetch", func(p *Proc) { p.PrefetchStore(ramBase) }, false, lateOwned},
		{"prefetch/loss", func(p *Proc) { p.PrefetchStore(ramBase) }, true, woken},
		{"failed-cas", func(p *Proc) { p.CAS(ramBase, 0, 2) }, false, lateOwned},
		{"failed-cas/loss", func(p *Proc) { p.CAS(ramBase, 0, 2) }, true, woken},
		{"load/loss", func(p *Proc) { p.Load(ramBase) }, true, lateShared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRigCoherence(t, 2, false, nil, Coherence{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat, MonitorLoss: tc.loss})
			var at Time
			var cause WakeCause
			r.e.Spawn(r.e.Cores()[0], "waiter", func(p *Proc) {
				p.Store(ramBase, 1)
				p.LoadExclusive(ramBase)
				cause = p.WFE()
				at = p.Now()
			})
			r.e.Spawn(r.e.Cores()[1], "other", func(p *Proc) {
				p.Delay(Microsecond)
				tc.op(p)
				p.Delay(5*Microsecond - p.Now())
				p.Store(ramBase, 3)
			})
			r.run(t)
			if at != tc.want || cause != WakeEvent {
				t.Errorf("waiter woke at %v by %v, want %v by an event", at, cause, tc.want)
			}
		})
	}
}

// TestMonitorLossFailsStoreExclusive: another core's prefetch for store
// between a load-exclusive and its store-exclusive makes the store fail
// with Coherence.MonitorLoss (the atomic retries), and not without it.
func TestMonitorLossFailsStoreExclusive(t *testing.T) {
	for _, loss := range []bool{false, true} {
		r := newRigCoherence(t, 2, false, nil, Coherence{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat, MonitorLoss: loss})
		var ok bool
		r.e.Spawn(r.e.Cores()[0], "llsc", func(p *Proc) {
			v := p.LoadExclusive(ramBase)
			p.Compute(1000) // the prefetch lands meanwhile
			ok = p.StoreExclusive(ramBase, v+1)
		})
		r.e.Spawn(r.e.Cores()[1], "prefetch", func(p *Proc) {
			p.Delay(500 * Nanosecond)
			p.PrefetchStore(ramBase)
		})
		r.run(t)
		if ok == loss {
			t.Errorf("MonitorLoss %v: store-exclusive succeeded %v, want %v", loss, ok, !loss)
		}
	}
}
