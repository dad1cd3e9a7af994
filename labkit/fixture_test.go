package labkit

import (
	"context"
	"math/rand/v2"

	"synclab/platforms"
	"synclab/sim"
)

// The test fixture: a tiny experiment with two variants whose metrics depend
// only on the run's seed and parameters.
const fixtureName = "fixture-queue"

func fixture() platforms.Experiment {
	return platforms.Experiment{
		Name:        fixtureName,
		Description: "test fixture: a noisy queue served by a fast or a slow server",
		Platform:    "testbed",
		Params: platforms.Params{
			{Key: "work", Value: 100, Unit: "cycles", Prov: platforms.CODE, Source: "fixture", Min: 1, Max: 1e6},
			{Key: "noise", Value: 0.1, Unit: "", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 1, Low: 0.05, High: 0.3},
			{Key: "slowdown", Value: 1.5, Unit: "x", Prov: platforms.ASSUME, Source: "guess", Min: 0.5, Max: 4, Low: 0.8, High: 3},
			{Key: "hz", Value: 100, Unit: "Hz", Prov: platforms.CODE, Source: "fixture", Choices: []float64{100, 250, 1000}},
		},
		Variants: []platforms.Variant{{Name: "fast", Doc: "fast server"}, {Name: "slow", Doc: "slow server"}},
		Repeats:  5,
		Seed:     42,
		Metrics: []platforms.Metric{
			{Name: "time_ms", Unit: "ms", Better: platforms.Lower, Doc: "total time"},
			{Name: "ops_s", Unit: "ops/s", Better: platforms.Higher, Doc: "throughput"},
		},
		Reference: []platforms.Reference{
			{Article: "fixture-article", Variant: "fast", Metric: "time_ms", Value: 0.02, Unit: "ms", Quote: "fast 0.02 ms"},
			{Article: "fixture-article", Variant: "slow", Metric: "time_ms", Value: 0.03, Unit: "ms", Quote: "slow 0.03 ms"},
			{Article: "fixture-article", Variant: "fast", Metric: "ops_s", Value: 5000, Unit: "ops/s", Quote: "fast 5000"},
			{Article: "fixture-article", Variant: "slow", Metric: "ops_s", Value: 9000, Unit: "ops/s", Quote: "slow 9000"},
		},
		Run: fixtureRun,
	}
}

func fixtureRun(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	rng := rand.New(rand.NewPCG(spec.Seed, 7))
	f := 1.0
	if spec.Variant == "slow" {
		f = spec.Params["slowdown"]
	}
	var lat []float64
	total := 0.0
	for range 200 {
		if err := ctx.Err(); err != nil {
			return platforms.RunResult{}, err
		}
		x := spec.Params["work"] * f * (1 + spec.Params["noise"]*rng.NormFloat64()) / 1000 // us per op
		lat = append(lat, x)
		total += x
	}
	res := platforms.RunResult{
		Metrics: map[string]float64{"time_ms": total / 1000, "ops_s": 200 / (total / 1e6)},
		Samples: map[string][]float64{"latency_us": lat},
	}
	if spec.Trace {
		res.Trace = sim.NewTrace(0, 10*sim.Microsecond, 100)
		res.Trace.Add(sim.Span{Core: 0, Lane: "state", Label: "run", Start: 0, End: 3 * sim.Microsecond})
		res.Trace.Add(sim.Span{Core: 1, Lane: "state", Label: "wfe", Start: sim.Microsecond, End: 4 * sim.Microsecond})
		res.Trace.Add(sim.Span{Core: 1, Lane: "lock", Label: "held", Start: 4 * sim.Microsecond, End: 6 * sim.Microsecond})
	}
	return res, nil
}

// withRun returns e with run as its run function.
func withRun(e platforms.Experiment, run platforms.RunFunc) platforms.Experiment {
	e.Run = run
	return e
}
