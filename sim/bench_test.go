package sim

import "testing"

// BenchmarkEngine schedules and dispatches events with about 1,000 pending,
// the shape of a busy multi-core run. Reports events/s.
func BenchmarkEngine(b *testing.B) {
	b.ReportAllocs()
	rate := BenchEngine(b.N)
	b.ReportMetric(rate, "events/s")
}

// BenchmarkContendedLock: two cores on an uncached port hammer one
// spinlock (the shape of the ESP32 experiments); reports wall ns per
// critical section.
func BenchmarkContendedLock(b *testing.B) {
	r := newRig(b, 2, true, nil)
	n := int64(b.N/2 + 1)
	for _, c := range r.e.Cores() {
		r.e.Spawn(c, "w", func(p *Proc) {
			for range n {
				spinLock(p, ramBase, 8, uint64(c.ID+1))
				p.FetchAdd(ramBase+64, 1)
				p.Compute(10)
				p.Store(ramBase, 0)
				p.Compute(30)
			}
		})
	}
	b.ResetTimer()
	r.run(b)
	b.ReportMetric(float64(r.e.Events())/float64(2*n), "events/cs")
}
