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
	var e platforms.Experiment
	for _, x := range Experiments() {
		if x.Name == "lock-scaling" {
			e = x
		}
	}
	for _, v := range e.Variants {
		for _, cores := range []float64{4, 8, 16} {
			b.Run(fmt.Sprintf("%s/%g", v.Name, cores), func(b *testing.B) {
				p := e.Params.Values()
				p["cores"] = cores
				for b.Loop() {
					if _, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: v.Name, Params: p, Seed: 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
