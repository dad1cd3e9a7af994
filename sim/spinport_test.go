package sim

import "testing"

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
