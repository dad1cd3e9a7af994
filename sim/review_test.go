package sim

import (
	"context"
	"errors"
	"testing"
)

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

// A writer whose stores keep failing a spinner's polls settles them
// inline and never yields; the run must still stop at its event budget or
// when its context is cancelled, not only when the writer ends.
func TestInlinePollsYieldToRunChecks(t *testing.T) {
	const n = 200_000
	run := func(maxEvents uint64, cancelAt int) (error, int) {
		r := newRig(t, 2, false, nil)
		defer r.e.Close()
		r.e.MaxEvents = maxEvents
		r.m.Poke(ramBase, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r.e.Spawn(r.e.Cores()[1], "spinner", func(p *Proc) {
			p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
		})
		wrote := 0
		r.e.Spawn(r.e.Cores()[0], "writer", func(p *Proc) {
			for ; wrote < n; wrote++ {
				if wrote == cancelAt {
					cancel()
				}
				p.Store(ramBase, uint64(wrote)+1)
				p.Compute(500) // long enough for the spinner's re-read to complete
			}
		})
		return r.e.Run(ctx), wrote
	}
	err, wrote := run(10_000, -1)
	var ra *RunawayError
	if !errors.As(err, &ra) || wrote >= n/2 || ra.Events > 10_000+4096 {
		t.Errorf("event budget 10000: got %v after %d of %d writes, want a runaway soon after the budget", err, wrote, n)
	}
	err, wrote = run(0, 1000)
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) || wrote >= n/2 {
		t.Errorf("cancelled at write 1000: got %v after %d of %d writes, want ErrStopped soon after", err, wrote, n)
	}
}

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
