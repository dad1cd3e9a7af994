package rk3399

import (
	"context"
	"fmt"
	"testing"

	"synclab/platforms"
)

// BenchmarkLockScaling runs one lock-scaling point per flavour at 4, 8 and
// 16 cores (100 ms of simulated time, one seed): the detailed engine on the
// Linux lock paths and their waits (sim.CondWait, sim.Acquire), for
// profiling and for before/after figures
// (go test -run '^$' -bench LockScaling ./platforms/rk3399/).
func BenchmarkLockScaling(b *testing.B) {
	e := experiment(b, "lock-scaling")
	for _, v := range e.Variants {
		for _, cores := range []float64{4, 8, 16} {
			b.Run(fmt.Sprintf("%s/%g", v.Name, cores), func(b *testing.B) {
				p := e.Params.Values()
				p["cores"] = cores
				runLoop(b, e, v.Name, p)
			})
		}
	}
}

// BenchmarkSpinlockWait runs each variant of the article's experiment
// (rk3399-spinlock-wait) once at its default parameters and seed 1: the
// RK3399 run that lab bench times as rk3399_default_wall_s, one variant at
// a time.
func BenchmarkSpinlockWait(b *testing.B) {
	e := experiment(b, "rk3399-spinlock-wait")
	for _, v := range e.Variants {
		b.Run(v.Name, func(b *testing.B) { runLoop(b, e, v.Name, e.Params.Values()) })
	}
}

// experiment returns the RK3399 experiment called name.
func experiment(b *testing.B, name string) platforms.Experiment {
	for _, x := range Experiments() {
		if x.Name == name {
			return x
		}
	}
	b.Fatalf("no experiment %q", name)
	return platforms.Experiment{}
}

// runLoop times one run of variant at params, seed 1, and reports the
// events it dispatched, the coroutine round trips it took
// (sim.Engine.Switches) and the wall time per event (sim's BenchmarkEngine
// and BenchmarkCoroutineRoundTrip time an empty event and a bare round
// trip).
func runLoop(b *testing.B, e platforms.Experiment, variant string, params map[string]float64) {
	var events, switches uint64
	for b.Loop() {
		r, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: variant, Params: params, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		events, switches = r.Events, r.Switches
	}
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(switches), "switches/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
}
