package sim

import "testing"

// BenchmarkEngine schedules and dispatches events with about 1,000 pending,
// the shape of a busy multi-core run. Reports events/s.
func BenchmarkEngine(b *testing.B) {
	b.ReportAllocs()
	rate := BenchEngine(b.N)
	b.ReportMetric(rate, "events/s")
}

// BenchLock, the peers' workload at the engine's level, runs every critical
// section, one core at a time: the simulated time is at least the sections'
// 10 cycles each, back to back.
func TestBenchLock(t *testing.T) {
	const n = 2000
	r, err := BenchLock(n)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sections != 2*n {
		t.Errorf("%d critical sections, want %d", r.Sections, 2*n)
	}
	least := Clock{Hz: 240_000_000}.Cycles(2 * n * 10)
	if r.Simulated < least {
		t.Errorf("simulated %v, less than the sections back to back (%v)", r.Simulated, least)
	}
	if r.Events == 0 {
		t.Error("no events dispatched")
	}
}

// BenchmarkLock times BenchLock (lab bench's sim_lock_2m_wall_s at b.N
// critical sections); reports events per critical section.
func BenchmarkLock(b *testing.B) {
	r, err := BenchLock(b.N/2 + 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(r.Events)/float64(r.Sections), "events/cs")
}

// BenchmarkCoroutineRoundTrip times BenchCoroutine: ns/op is one
// resumption of a process's kind of coroutine. Engine.Switches counts these
// round trips in a run, Engine.Events its events (BenchmarkEngine times an
// empty one): together they bound a run's wall time from below before any
// model work.
func BenchmarkCoroutineRoundTrip(b *testing.B) {
	BenchCoroutine(b.N)
}
