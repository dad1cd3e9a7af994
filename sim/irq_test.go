package sim

import "testing"

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
		if lat.Count() != 1 || lat.Max() != want {
			t.Errorf("masked %v: %d latencies, the largest %v, want one of %v", masked, lat.Count(), lat.Max(), want)
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
