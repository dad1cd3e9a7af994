package sim

import (
	"context"
	"testing"
)

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
