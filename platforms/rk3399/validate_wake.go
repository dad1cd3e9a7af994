package rk3399

import (
	"context"
	"fmt"
	"maps"

	"synclab/platforms"
	"synclab/platforms/linux"
	"synclab/sim"
)

// The wake-up of one lock waiter, alone: how long after a release a waiter
// in WFE or WFI holds the lock. It isolates the mechanism rk3399-spinlock-
// wait's averages are made of, so that it can be checked against what the
// kernel's code implies (a WFI waiter's next tick, half a tick period after
// a release at a random phase; a WFE waiter whose wake-up events are lost,
// the event stream's next event).

func wakeParams() platforms.Params {
	return append(Params(),
		platforms.Param{Key: "holder_cpu", Value: 4, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: "scenario",
			Doc: "CPU of the holder", Min: 0, Max: 5},
		platforms.Param{Key: "waiter_cpu", Value: 5, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: "scenario",
			Doc: "CPU of the waiter", Min: 0, Max: 5},
		platforms.Param{Key: "handoffs", Value: 400, Unit: "hand-offs", Prov: platforms.CODE, Integer: true, Source: "scenario: the mean's sampling error is about 3% of half a period at 400 rounds",
			Doc: "hand-offs measured", Min: 1, Max: 1e5},
		platforms.Param{Key: "hold_max_us", Value: 20000, Unit: "us", Prov: platforms.CODE,
			Source: "scenario: 20 ms is a whole number of tick periods at HZ 100, 250, 300 and 1000, so a hold of U[0, 20 ms] puts the release at a uniform phase",
			Doc:    "the holder holds the lock for a uniformly random time up to this", Min: 1, Max: 1e6},
		loseWake(),
	)
}

func wake() platforms.Experiment {
	return platforms.Experiment{
		Name: "rk3399-wake",
		Description: "One qspinlock waiter alone on the RK3399 model under Linux 5.10: holder_cpu holds the lock for U[0, hold_max_us], " +
			"waiter_cpu waits with spin_lock (interrupts enabled) in WFE (smp_cond_load_acquire) or WFI (the article's fault); " +
			"release_to_acquire_us is the time from the release to the waiter holding the lock. WFE: the wake and three line transfers (the release, the reload, the claim); " +
			"WFI: the waiter's next tick, half a tick period later on average; WFE with lost wake-ups: the event stream's next event.",
		Platform: "rk3399",
		Params:   wakeParams(),
		Variants: []platforms.Variant{
			{Name: "wfe", Doc: "arm64 qspinlock waiting in LDXR+WFE: the releasing store clears the waiter's monitor"},
			{Name: "wfi", Doc: "the same lock waiting in WFI: only an interrupt (the tick) wakes the waiter"},
		},
		Repeats: 1, Seed: 9,
		Metrics: []platforms.Metric{
			{Name: "release_to_acquire_us", Unit: "us", Better: platforms.Lower, Doc: "mean time from the holder's release to the waiter holding the lock"},
			{Name: "max_release_to_acquire_us", Unit: "us", Better: platforms.Lower, Doc: "longest of those times"},
			{Name: "ticks", Unit: "", Better: platforms.Neither, Doc: "scheduler ticks handled on the holder's and the waiter's CPUs"},
		},
		Run:    runWake,
		Check:  checkWake,
		Traces: true,
	}
}

// checkWake refuses values that cannot run: a bad parameter, or the holder
// and the waiter on one CPU.
var checkWake = checkPair("rk3399-wake", wakeParams, "holder_cpu", "waiter_cpu")

// checkPair returns the check of an experiment of two threads on two CPUs
// (name, its parameters, the keys of the two CPUs): the values must be
// the parameters' and the CPUs different.
func checkPair(name string, params func() platforms.Params, a, b string) func(map[string]float64) error {
	return func(v map[string]float64) error {
		if err := params().SetFrom(v, true); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if cpu := int(v[a]); cpu == int(v[b]) {
			return fmt.Errorf("parameters %s = %s = %d: want two different CPUs", a, b, cpu)
		}
		return nil
	}
}

// boot builds the RK3399 at v under Linux on a fresh engine with spec's
// seed and trace; the caller closes the engine.
func boot(spec platforms.RunSpec, v map[string]float64) (*sim.Engine, []*sim.Core, *linux.Kernel, error) {
	soc, err := SoC(v)
	if err != nil {
		return nil, nil, nil, err
	}
	e := sim.NewEngine(spec.Seed)
	e.Trace = spec.NewTrace(0, traceWindow)
	const base, size = sim.Addr(0x10000), 1 << 14
	cores, mem, err := soc.Build(e, soc.NumCores(), base, size)
	if err != nil {
		e.Close()
		return nil, nil, nil, err
	}
	k, err := linux.New(e, cores, mem, base, size, Kernel(v))
	if err != nil {
		e.Close()
		return nil, nil, nil, err
	}
	return e, cores, k, nil
}

func runWake(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	mode, err := linux.ParseMode(spec.Variant)
	if err != nil {
		return platforms.RunResult{}, err
	}
	v := maps.Clone(spec.Params)
	if err := checkWake(v); err != nil {
		return platforms.RunResult{}, err
	}
	a, b, n := int(v["holder_cpu"]), int(v["waiter_cpu"]), int(v["handoffs"])
	e, cores, k, err := boot(spec, v)
	if err != nil {
		return platforms.RunResult{}, err
	}
	defer e.Close()
	if err := e.SetFaults(sim.Faults{LoseWake: v["lose_wake"]}); err != nil {
		return platforms.RunResult{}, err
	}
	lock, err := k.NewSpinlock(linux.QSpinlock, linux.Wait{Mode: mode, RelaxCycles: 20})
	if err != nil {
		return platforms.RunResult{}, err
	}
	// held carries the round whose lock the holder has taken; done the
	// round the waiter has finished. Both sit on their own lines.
	held, err := k.Alloc(8)
	if err != nil {
		return platforms.RunResult{}, err
	}
	done, err := k.Alloc(8)
	if err != nil {
		return platforms.RunResult{}, err
	}
	rng := e.Stream("hold")
	holdMax := v["hold_max_us"] * float64(sim.Microsecond)
	var released sim.Time
	var total, worst sim.Time
	e.Spawn(cores[a], "holder", func(p *sim.Proc) {
		for r := uint64(1); r <= uint64(n); r++ {
			lock.Lock(p)
			p.Store(held, r)
			p.Delay(sim.Time(rng.Float64() * holdMax))
			released = p.Now()
			lock.Unlock(p)
			p.SpinUntil(done, 20, func(x uint64) bool { return x == r })
		}
	})
	e.Spawn(cores[b], "waiter", func(p *sim.Proc) {
		for r := uint64(1); r <= uint64(n); r++ {
			p.SpinUntil(held, 20, func(x uint64) bool { return x == r })
			lock.Lock(p)
			d := p.Now() - released
			total += d
			worst = max(worst, d)
			lock.Unlock(p)
			p.Store(done, r)
		}
	})
	e.Until = sim.Time(float64(n)*(holdMax+float64(sim.Second)/v["hz"])) + sim.Second
	if err := e.Run(ctx); err != nil {
		return platforms.RunResult{}, err
	}
	if e.StopReason() != "done" {
		return platforms.RunResult{}, fmt.Errorf("rk3399-wake: run did not finish by %v: %s", e.Until, e.Waiters())
	}
	ticks := k.CPUs[a].Ticks + k.CPUs[b].Ticks
	return platforms.RunResult{Metrics: map[string]float64{
		"release_to_acquire_us":     (total / sim.Time(n)).Micros(),
		"max_release_to_acquire_us": worst.Micros(),
		"ticks":                     float64(ticks),
	}, Trace: e.Trace}, nil
}
