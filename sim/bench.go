package sim

import (
	"time"
)

// BenchEngine schedules and dispatches n events through the queue with
// about 1,000 events pending (each firing reschedules itself a
// pseudo-random delay ahead) and returns the measured events per second of
// wall time. It backs BenchmarkEngine and `lab bench`.
func BenchEngine(n int) float64 {
	const pending = 1000
	e := NewEngine(1)
	r := e.Stream("bench")
	delays := make([]Time, 4096)
	for i := range delays {
		delays[i] = Time(1 + r.IntN(1000000))
	}
	k := 0
	left := n
	evs := make([]*Event, pending)
	for i := range evs {
		var ev *Event
		ev = NewEvent(func() {
			left--
			if left > 0 {
				k = (k + 1) & 4095
				e.At(e.now+delays[k], ev)
			}
		}, false)
		evs[i] = ev
		e.At(delays[i], ev)
	}
	start := time.Now()
	for left > 0 && e.Step() {
	}
	return float64(n) / time.Since(start).Seconds()
}
