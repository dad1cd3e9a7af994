package sim

import (
	"context"
	"math/rand/v2"
	"testing"
)

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
			p.Store(ramBase, 2) // hand the lock to core 1, before it frees it
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

// A spinner whose interrupt handler switches it out, and which another
// core then switches back in, finishes its spin on that other core: the
// spin's exit state goes to the core it ends on, not to the one it began on.
func TestSpinMovedToAnotherCore(t *testing.T) {
	r := newRig(t, 3, false, nil)
	c0, c1, c2 := r.e.Cores()[0], r.e.Cores()[1], r.e.Cores()[2]
	r.m.Poke(ramBase, 1)
	var spinner *Proc
	var endCore *Core
	var st0, st1 State
	sleeper := r.e.NewProc("sleeper", false, func(p *Proc) { p.Sleep(50 * Microsecond) })
	c0.SetHandler(func(p *Proc, irq IRQ) {
		if p == spinner {
			p.SwitchTo(sleeper)
		}
	})
	c0.NewTimer(1).OneShot(Microsecond)
	spinner = r.e.Spawn(c0, "spinner", func(p *Proc) {
		p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
		endCore, st0, st1 = p.Core(), c0.state, c1.state
	})
	mover := r.e.NewProc("mover", true, func(p *Proc) {
		p.Delay(2 * Microsecond)
		p.SwitchTo(spinner)
	})
	c1.Start(mover)
	r.e.Spawn(c2, "releaser", func(p *Proc) { p.Delay(5 * Microsecond); p.Store(ramBase, 0) })
	r.run(t)
	if endCore != c1 {
		t.Fatalf("spin ended on core %v, want core 1", endCore)
	}
	if st1 != StateExec || st0 != StateWFI {
		t.Errorf("after the spin: core 0 %s (want wfi: its task sleeps), core 1 %s (want exec)", c0.StateName(st0), c1.StateName(st1))
	}
	if got := c1.Residency(StateSpin); got > 4*Microsecond {
		t.Errorf("core 1 spun %v, want only until the release (~3us)", got)
	}
	if got := c0.Residency(StateWFI); got < 45*Microsecond {
		t.Errorf("core 0 in WFI for %v, want the sleeper's ~50us", got)
	}
}

// An interrupt raised while a spinner's first poll stalls on memory is
// taken when the poll completes, as the explicit load-and-retry loop takes
// it, not when the spin ends.
func TestSpinTakesInterruptRaisedDuringPoll(t *testing.T) {
	handledAt := func(analytic bool) Time {
		r := newRig(t, 2, false, nil)
		r.m.Poke(ramBase, 1)
		c1 := r.e.Cores()[1]
		var handled Time
		c1.SetHandler(func(p *Proc, irq IRQ) { handled = p.Now() })
		c1.NewTimer(2).OneShot(50 * Nanosecond) // the first poll fills the line from memory: 0..100ns
		r.e.Spawn(c1, "spinner", func(p *Proc) {
			if analytic {
				p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
				return
			}
			for p.Load(ramBase) != 0 {
				p.Compute(10)
			}
		})
		r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) { p.Delay(5 * Microsecond); p.Store(ramBase, 0) })
		r.run(t)
		return handled
	}
	a, b := handledAt(true), handledAt(false)
	if a != b || a > 200*Nanosecond {
		t.Fatalf("handler ran at %v while spinning, at %v in the explicit loop (want the same, ~110ns)", a, b)
	}
}

// Two cores take one CAS spinlock on uncached memory with interrupts whose
// handlers take a second spinlock: never two holders.
func TestSpinCASMutualExclusion(t *testing.T) {
	for seed := uint64(1); seed < 20; seed++ {
		r := newRig(t, 2, true, nil)
		r.e.seed = seed
		holders := 0
		const lock, lock2, ctr = ramBase, ramBase + 8, ramBase + 16
		for _, c := range r.e.Cores() {
			c.SetHandler(func(p *Proc, irq IRQ) {
				p.SpinCAS(lock2, 0, 1, 4)
				p.Compute(30)
				p.Store(lock2, 0)
			})
			c.NewDevice("d"+string(rune('0'+c.ID)), 1, 3*Microsecond, true)
			r.e.Spawn(c, "w", func(p *Proc) {
				for i := 0; i < 3000; i++ {
					p.SpinCAS(lock, 0, uint64(p.Core().ID+1), 4)
					prev := p.Mask(5)
					holders++
					if holders != 1 {
						t.Fatalf("seed %d: %d holders at %v", seed, holders, p.Now())
					}
					p.Compute(int64(i % 50))
					holders--
					p.Restore(prev)
					p.Store(lock, 0)
					p.Compute(int64(i % 37))
				}
			})
		}
		if err := r.e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A spinner's memory stall is its first read and the read that sees the
// release, each as long as the access takes (rig: a fill from DRAM 100 ns,
// a line from the other core of the cluster 50 ns, from the other cluster
// 200 ns); the polls in between hit its cache and are spinning, not stall.
func TestSpinStallIsFirstAndLastRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder int // the releasing core: same cluster (1) or the other (2)
		want   Time
	}{
		{"same cluster", 1, dramLat + sameLat},
		{"other cluster", 2, dramLat + otherLat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 3, false, nil)
			r.m.Poke(ramBase, 1)
			c0 := r.e.Cores()[0]
			var got uint64
			r.e.Spawn(c0, "spinner", func(p *Proc) {
				got = p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
			})
			r.e.Spawn(r.e.Cores()[tc.holder], "holder", func(p *Proc) { p.Delay(Microsecond); p.Store(ramBase, 0) })
			r.run(t)
			if got != 0 || c0.Stall != tc.want {
				t.Errorf("spinner saw %d after %v of stall, want 0 after %v", got, c0.Stall, tc.want)
			}
		})
	}
}

// On uncached memory the port serves requests in the order they were made,
// and a spinner's poll is made when it is due, even when earlier traffic
// pushed it back: core 1's access at 350 ns holds the port over the poll
// due at 360 ns, and core 2's store, asked for at 355 ns, goes before that
// poll, as in the explicit load-and-retry loop; so the poll sees the store.
func TestPortServesAPushedBackPollInItsTurn(t *testing.T) {
	const other = ramBase + 64
	for _, rmw := range []bool{false, true} {
		end := func(analytic bool) Time {
			r := newRig(t, 3, true, nil)
			r.m.Poke(ramBase, 1)
			var got Time
			r.e.Spawn(r.e.Cores()[0], "spinner", func(p *Proc) {
				switch {
				case analytic && rmw:
					p.SpinCAS(ramBase, 0, 7, 20)
				case analytic:
					p.SpinUntil(ramBase, 20, func(v uint64) bool { return v == 0 })
				case rmw:
					for {
						if _, ok := p.CAS(ramBase, 0, 7); ok {
							break
						}
						p.Compute(20)
					}
				default:
					for p.Load(ramBase) != 0 {
						p.Compute(20)
					}
				}
				got = p.Now()
			})
			r.e.Spawn(r.e.Cores()[1], "bystander", func(p *Proc) { p.Delay(350 * Nanosecond); p.Store(other, 1) })
			r.e.Spawn(r.e.Cores()[2], "holder", func(p *Proc) { p.Delay(355 * Nanosecond); p.Store(ramBase, 0) })
			r.run(t)
			return got
		}
		if a, b := end(true), end(false); a != b {
			t.Errorf("rmw %v: analytic spin ended at %v, explicit loop at %v", rmw, a, b)
		}
	}
}

// On uncached memory a suspended spinner's polls share the port with other
// cores' accesses, first come, first served: an access that lands on a
// poll delays it (and the wake-up due at it), a request made before a
// pushed-back poll was due goes first, and the poll that ends the spin
// starts where earlier grants left room for it. Over random traffic by a
// bystander and random release times, SpinUntil and SpinCAS end exactly
// when the explicit loops they stand for end (a load or a CAS, then the
// loop body), and the bystander's accesses end at the same times too.
// Clocks differ and the bystander waits at least a cycle between stores,
// so that no two requests meet at one picosecond: at such a tie the
// analytic spin serves its poll first, the explicit loop in event order.
func TestSpinMatchesExplicitLoopUnderPortTraffic(t *testing.T) {
	const other = ramBase + 64
	run := func(seed uint64, rmw, analytic bool) (Time, Time) {
		rng := rand.New(rand.NewPCG(seed, 99))
		release := Time(300+rng.IntN(3000)) * Nanosecond
		loop := int64(5 + rng.IntN(40))
		gaps := make([]int64, 60)
		for i := range gaps {
			gaps[i] = 1 + int64(rng.IntN(60))
		}
		hz := []int64{1_000_000_000, 997_000_000, 1_013_000_000}
		n := 0
		r := newRig(t, 3, true, func(c *CoreConfig) { c.Hz = hz[n]; n++ })
		r.m.Poke(ramBase, 1)
		var got, last Time
		r.e.Spawn(r.e.Cores()[0], "spinner", func(p *Proc) {
			switch {
			case analytic && rmw:
				p.SpinCAS(ramBase, 0, 7, loop)
			case analytic:
				p.SpinUntil(ramBase, loop, func(v uint64) bool { return v == 0 })
			case rmw:
				for {
					if _, ok := p.CAS(ramBase, 0, 7); ok {
						break
					}
					p.Compute(loop)
				}
			default:
				for p.Load(ramBase) != 0 {
					p.Compute(loop)
				}
			}
			got = p.Now()
		})
		r.e.Spawn(r.e.Cores()[1], "holder", func(p *Proc) { p.Delay(release); p.Store(ramBase, 0) })
		r.e.Spawn(r.e.Cores()[2], "bystander", func(p *Proc) {
			for i, g := range gaps {
				p.Compute(g)
				p.Store(other, uint64(i))
			}
			last = p.Now()
		})
		r.run(t)
		return got, last
	}
	bad := 0
	for seed := range uint64(300) {
		for _, rmw := range []bool{false, true} {
			a, al := run(seed, rmw, true)
			b, bl := run(seed, rmw, false)
			if a != b || al != bl {
				if bad++; bad <= 3 {
					t.Errorf("seed %d, rmw %v: analytic spin ended at %d ps (bystander %d), explicit loop at %d ps (bystander %d)", seed, rmw, a, al, b, bl)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 600 runs differ", bad)
	}
}
