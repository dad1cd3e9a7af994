package sim

import "testing"

// BenchmarkEngine schedules and dispatches events with about 1,000 pending,
// the shape of a busy multi-core run. Reports events/s.
func BenchmarkEngine(b *testing.B) {
	b.ReportAllocs()
	rate := BenchEngine(b.N)
	b.ReportMetric(rate, "events/s")
}
