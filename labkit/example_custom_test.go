package labkit_test

import (
	"context"
	"fmt"

	"synclab/labkit"
	"synclab/platforms"
	"synclab/sim"
)

// A new experiment in a few lines: a hypothetical dual-core SoC whose two
// cores share a counter under a test-and-test-and-set spinlock. The README
// shows this example; keep them the same.
func Example_customExperiment() {
	labkit.Register(labkit.Experiment{
		Name:        "my-spinlock",
		Description: "two cores, one TTAS spinlock, cross-cluster or not",
		Platform:    "my-soc",
		Params: platforms.Params{
			{Key: "iterations", Value: 1000, Unit: "ops", Prov: platforms.ASSUME, Min: 1, Max: 1e6, Low: 100, High: 10000},
			{Key: "transfer_ns", Value: 80, Unit: "ns", Prov: platforms.ASSUME, Source: "a guess", Min: 1, Max: 1000, Low: 40, High: 250},
		},
		Variants: []labkit.Variant{{Name: "ttas"}},
		Repeats:  2,
		Seed:     1,
		Metrics:  []labkit.Metric{{Name: "ns_per_op", Unit: "ns", Better: labkit.Lower}},
	}, func(ctx context.Context, spec labkit.RunSpec) (labkit.RunResult, error) {
		e := sim.NewEngine(spec.Seed)
		for i := 0; i < 2; i++ {
			if _, err := e.AddCore(sim.CoreConfig{Name: "cpu", Hz: 1e9, ExecMW: 500, SpinMW: 500, HitCycles: 2}); err != nil {
				return labkit.RunResult{}, err
			}
		}
		m, _ := e.NewMemory(sim.Coherence{LineSize: 64, SameCluster: sim.Time(spec.Params["transfer_ns"]) * sim.Nanosecond})
		m.AddRegion(sim.Region{Name: "ram", Base: 0x1000, Size: 4096, Latency: 100 * sim.Nanosecond})
		locks := &sim.SpinLocks{Addr: map[string]sim.Addr{"l": 0x1000}, Loop: 10}
		n := int64(spec.Params["iterations"])
		prog := sim.Program{Name: "worker", Ops: []sim.Op{
			sim.Loop(n, sim.Lock("l"), sim.Atomic(0x1040, 1), sim.Compute(50), sim.Unlock("l"), sim.Compute(100)),
		}}
		for _, c := range e.Cores() {
			e.Spawn(c, "worker", func(p *sim.Proc) {
				if err := p.Exec(prog, locks); err != nil {
					p.Fail(err)
				}
			})
		}
		if err := e.Run(ctx); err != nil {
			return labkit.RunResult{}, err
		}
		return labkit.RunResult{Metrics: map[string]float64{"ns_per_op": e.Now().Nanos() / float64(2*n)}}, nil
	})

	exp, _, _ := labkit.Lookup("my-spinlock")
	exp, _ = exp.With("transfer_ns", 200)
	res, err := labkit.RunExperiment(context.Background(), exp, labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Summary("ttas", 0, "ns_per_op")
	fmt.Printf("%.0f ns per critical section\n", s.Mean)
	// Output:
	// 584 ns per critical section
}
