package esp32

import (
	"context"
	"testing"
)

// BenchmarkMutex2M runs the article's mutex variant at its full size: two
// tasks, 1,000,000 guarded increments each (2,000,000 critical sections).
func BenchmarkMutex2M(b *testing.B) {
	for b.Loop() {
		r, err := RunCriticalSection(context.Background(), VariantMutex, nil, 1, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Counter != r.Expected {
			b.Fatalf("counter %d, want %d", r.Counter, r.Expected)
		}
	}
}

// BenchmarkMutexDetailed runs the mutex variant at 100,000 increments per
// task with every period simulated (no fast-forward): the detailed engine's
// speed on the kernel's lock paths, for profiling
// (go test -run '^$' -bench MutexDetailed -cpuprofile cpu.out ./platforms/esp32/).
// Reports the events and the coroutine round trips (sim.Engine.Switches)
// per critical section, and the wall time per event; sim's
// BenchmarkEngine and BenchmarkCoroutineRoundTrip time an empty event and
// a bare round trip, the floor of each.
func BenchmarkMutexDetailed(b *testing.B) {
	var r CSResult
	for b.Loop() {
		var err error
		r, err = RunCriticalSection(context.Background(), VariantMutex, map[string]float64{"iterations": 100_000}, 1, RunOptions{Detailed: true})
		if err != nil {
			b.Fatal(err)
		}
		if r.Counter != r.Expected {
			b.Fatalf("counter %d, want %d", r.Counter, r.Expected)
		}
	}
	b.ReportMetric(float64(r.Events)/float64(r.Expected), "events/cs")
	b.ReportMetric(float64(r.Switches)/float64(r.Expected), "switches/cs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Events), "ns/event")
}
