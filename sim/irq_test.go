package sim

import (
	"slices"
	"testing"
)

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

// irqAt is one interrupt taken: its line and when its handler began.
type irqAt struct {
	irq IRQ
	at  Time
}

// TestTimersDevicesAndIPIsFireOnTime pins when each interrupt source
// raises its line, on a core busy in one long Compute (rig: 1 GHz, 10
// cycles of entry, so a handler begins 10 ns after its line is raised):
// a periodic timer first at its phase and then every period; OneShot and
// Stop ending a period (a re-armed tick would keep firing); a periodic
// device one mean after it is attached, then every mean; an IPI after its
// latency.
func TestTimersDevicesAndIPIsFireOnTime(t *testing.T) {
	const us, entry = Microsecond, 10 * Nanosecond
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, r rig) // before the run; core 1 is free for a process
		want  []irqAt
	}{
		{"periodic", func(t *testing.T, r rig) {
			tm := r.e.Cores()[0].NewTimer(1)
			if err := tm.Periodic(20*us, 3*us); err != nil {
				t.Fatal(err)
			}
			if at, ok := tm.Next(); !ok || at != 3*us {
				t.Errorf("Next() = %v, %v; want 3us, true", at, ok)
			}
		}, []irqAt{{1, 3*us + entry}, {1, 23*us + entry}, {1, 43*us + entry}, {1, 63*us + entry}, {1, 83*us + entry}}},
		{"oneshot-ends-period", func(t *testing.T, r rig) {
			tm := r.e.Cores()[0].NewTimer(1)
			if err := tm.Periodic(20*us, 3*us); err != nil {
				t.Fatal(err)
			}
			r.e.Spawn(r.e.Cores()[1], "reprogram", func(p *Proc) { p.Delay(30 * us); tm.OneShot(50 * us) })
		}, []irqAt{{1, 3*us + entry}, {1, 23*us + entry}, {1, 50*us + entry}}},
		{"stop", func(t *testing.T, r rig) {
			tm := r.e.Cores()[0].NewTimer(1)
			if err := tm.Periodic(20*us, 3*us); err != nil {
				t.Fatal(err)
			}
			r.e.Spawn(r.e.Cores()[1], "stopper", func(p *Proc) {
				p.Delay(30 * us)
				tm.Stop()
				if _, ok := tm.Next(); ok {
					t.Error("a stopped timer reports a next firing")
				}
			})
		}, []irqAt{{1, 3*us + entry}, {1, 23*us + entry}}},
		{"device", func(t *testing.T, r rig) {
			if _, err := r.e.Cores()[0].NewDevice("uart", 2, 30*us, false); err != nil {
				t.Fatal(err)
			}
		}, []irqAt{{2, 30*us + entry}, {2, 60*us + entry}, {2, 90*us + entry}}},
		{"ipi", func(t *testing.T, r rig) {
			c0 := r.e.Cores()[0]
			r.e.Spawn(r.e.Cores()[1], "sender", func(p *Proc) { p.Delay(2 * us); p.SendIPI(c0, 3, 1500*Nanosecond) })
		}, []irqAt{{3, 3500*Nanosecond + entry}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, false, nil)
			c0 := r.e.Cores()[0]
			var got []irqAt
			c0.SetHandler(func(p *Proc, irq IRQ) { got = append(got, irqAt{irq, p.Now()}) })
			r.e.Spawn(c0, "busy", func(p *Proc) { p.Compute(100_000) }) // 100 us
			tc.setup(t, r)
			r.run(t)
			if !slices.Equal(got, tc.want) {
				t.Errorf("interrupts taken %v, want %v", got, tc.want)
			}
		})
	}
}
