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
	os := &SpinLocks{Addr: map[string]Addr{"l": ramBase}, Loop: 8}
	n := int64(b.N/2 + 1)
	prog := Program{Name: "inc", Ops: []Op{Loop(n, Lock("l"), Atomic(ramBase+64, 1), Compute(10), Unlock("l"), Compute(30))}}
	for _, c := range r.e.Cores() {
		r.e.Spawn(c, "w", func(p *Proc) { p.Exec(prog, os) })
	}
	b.ResetTimer()
	r.run(b)
	b.ReportMetric(float64(r.e.Events())/float64(2*n), "events/cs")
}
