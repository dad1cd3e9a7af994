package sim

import (
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
