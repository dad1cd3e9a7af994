package rk3399

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"synclab/platforms"
	"synclab/platforms/generic"
	"synclab/sim"
)

// The core-to-core ping-pong of nviennot/core-to-core-latency (src/bench/
// cas.rs): two threads pinned to two CPUs flip one shared word between PING
// and PONG with compare-and-exchange, each waiting for the other's value;
// the latency is the round-trip time over two. It measures what a lock
// hand-off is made of, a cache line moving between two cores, and is what
// the published Cortex-A72 figures (Raspberry Pi 4, NXP LX2160A) report.

// Variants of the ping-pong experiments: how compare-and-exchange is
// compiled.
const (
	// PingLLSC is Armv8.0 without LSE (Cortex-A53/A72, the RK3399, the
	// Raspberry Pi 4, the LX2160A): LDXR, compare, STXR; a failed compare
	// is a load that arms the monitor and loops.
	PingLLSC = "llsc"
	// PingCAS is an LSE CAS (Armv8.1+): every attempt, failed or not,
	// takes the line exclusively.
	PingCAS = "cas"
	// PingLdSt is the hop with plain accesses, a load-acquire and then a
	// store-release (LDAR, STLR): a read and an upgrade, as LL/SC's, with no
	// exclusive pair. The model charges both the same; on a board the two
	// tell whether the LDXR takes the line for writing (then llsc's hop is
	// one transfer and this one two) or an upgrade is cheap (both alike).
	PingLdSt = "ldst"
)

const (
	ping, pong = 0, 1
	// warmRounds are left out of the timing: the first touches fill the
	// line from DRAM and settle who holds it.
	warmRounds = 8
)

var pingMetrics = []platforms.Metric{
	{Name: "one_way_ns", Unit: "ns", Better: platforms.Lower, Doc: "round-trip time over two (the benchmark's 'latency'): one hop of the word from one core to the other, " +
		"made of the line transfers of the winning attempt (llsc: the LDXR's re-read after the other core's write, then the STXR's " +
		"upgrade, which invalidates the other core's copy; cas: one exclusive transfer; ldst: the load's re-read, then the store's upgrade) plus the loop"},
	{Name: "round_trip_ns", Unit: "ns", Better: platforms.Lower, Doc: "time of one PING->PONG->PING cycle"},
	{Name: "transfers_per_hop", Unit: "transfers", Better: platforms.Neither, Doc: "line misses of the shared word per hop (coherence transfers the model charged)"},
}

// srcPinned is the source of the pinned pair: the lab's choice, since the
// benchmark pins its threads to the CPUs it is given.
const srcPinned = "scenario: the pair this lab times; nviennot/core-to-core-latency src/bench/cas.rs pins its two threads to whichever CPUs it is given"

// pingParams are the parameters the ping-pong reads: the clusters' clocks
// and latencies, the pinned pair, the run length and the retry loop.
func pingParams() platforms.Params {
	keep := []string{"a53_mhz", "a72_mhz", "same_cluster_ns", "cross_cluster_ns", "dram_ns", "hit_cycles"}
	ps := slices.DeleteFunc(Params(), func(p platforms.Param) bool { return !slices.Contains(keep, p.Key) })
	const pinned = srcPinned + " (cpu4 and cpu5: the A72 pair sharing an L2)"
	return append(ps,
		platforms.Param{Key: "cpu_a", Value: 4, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: pinned,
			Doc: "CPU of the ping thread (Linux numbering: A53s first)", Min: 0, Max: 5},
		platforms.Param{Key: "cpu_b", Value: 5, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: pinned,
			Doc: "CPU of the pong thread", Min: 0, Max: 5},
		platforms.Param{Key: "rounds", Value: 2000, Unit: "round trips", Prov: platforms.CODE, Integer: true,
			Source: "nviennot/core-to-core-latency src/main.rs DEFAULT_NUM_ITERATIONS_PER_SAMPLE = 1000 round trips per sample, 5000 in its published runs (results/notes.txt: ./core-to-core-latency 5000 300); 2000 between them",
			Doc:    "timed round trips", Min: 1, Max: 1e6},
		platforms.Param{Key: "loop_cycles", Value: 4, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Source: "no source; compare, branch and loop back of the retry loop",
			Doc: "instructions of one retry besides its memory access", Min: 0, Max: 1000, Low: 2, High: 20},
	)
}

// genericPingParams adds the generic part's shape, cores and cluster size,
// and drops the A53 clock: the part has A72-like cores only.
func genericPingParams() platforms.Params {
	ps := slices.DeleteFunc(pingParams(), func(p platforms.Param) bool { return p.Key == "a53_mhz" })
	for i := range ps {
		genericDoc(&ps[i])
		switch ps[i].Key {
		case "cpu_a":
			ps[i].Value, ps[i].Max = 0, 63
		case "cpu_b":
			ps[i].Value, ps[i].Max = 1, 63
		}
		if k := ps[i].Key; k == "cpu_a" || k == "cpu_b" {
			ps[i].Source = srcPinned + " (cpu0 and cpu1: two cores of the first cluster)"
		}
	}
	return append(ps,
		platforms.Param{Key: "soc_cores", Value: 4, Unit: "cores", Prov: platforms.ASSUME, Integer: true, Source: "generic N-core builder",
			Doc: "cores of the generic part, of which the ping-pong uses cpu_a and cpu_b (clusters of per_cluster A72-like cores)", Min: 2, Max: 64, Low: 2, High: 16},
		platforms.Param{Key: "per_cluster", Value: 4, Unit: "cores", Prov: platforms.ASSUME, Integer: true, Source: "generic N-core builder (Raspberry Pi 4: one cluster of 4 A72)",
			Doc: "cores per cluster", Min: 1, Max: 64, Low: 2, High: 4},
	)
}

func pingPong() platforms.Experiment {
	return pingExperiment("rk3399-pingpong", "rk3399",
		"Core-to-core latency on the RK3399 model, as nviennot/core-to-core-latency measures it: two threads pinned to "+
			"cpu_a and cpu_b flip one word between PING and PONG with compare-and-exchange; one_way_ns is the round trip over two. "+
			"cpu4-cpu5 are the two A72 sharing an L2, cpu0-cpu3 the A53s, an A53-A72 pair crosses the CCI-500. No OS: the threads "+
			"run undisturbed (the benchmark's ticks and its timer reads are left out).",
		pingParams(), 7, func(rk generic.SoC, _ map[string]float64) (generic.SoC, error) { return rk, nil })
}

func genericPingPong() platforms.Experiment {
	return pingExperiment("generic-pingpong", "generic",
		"rk3399-pingpong on the generic N-core builder: soc_cores A72-like cores (the RK3399's A72 latencies and OPPs) in "+
			"clusters of per_cluster, e.g. one cluster of four like the Raspberry Pi 4's BCM2711.",
		genericPingParams(), 8, func(rk generic.SoC, v map[string]float64) (generic.SoC, error) {
			n := int(v["soc_cores"])
			return generic.NCore(fmt.Sprintf("generic-%d", n), n, int(v["per_cluster"]), rk.Clusters[1], rk)
		})
}

// pingExperiment is a ping-pong experiment on the part that part builds
// from the RK3399 (its parameters at their defaults, overridden by the run's).
func pingExperiment(name, platform, desc string, params platforms.Params, seed uint64,
	part func(rk generic.SoC, v map[string]float64) (generic.SoC, error)) platforms.Experiment {
	// build returns the part, with cpu_a and cpu_b two of its CPUs.
	build := func(v map[string]float64) (generic.SoC, error) {
		pv := Defaults()
		maps.Copy(pv, v)
		rk, err := SoC(pv)
		if err != nil {
			return generic.SoC{}, err
		}
		soc, err := part(rk, v)
		if err != nil {
			return generic.SoC{}, err
		}
		if a, b, nc := int(v["cpu_a"]), int(v["cpu_b"]), soc.NumCores(); a == b || a >= nc || b >= nc {
			return generic.SoC{}, fmt.Errorf("parameters cpu_a = %d and cpu_b = %d: want two different CPUs of the %d (0 to %d)", a, b, nc, nc-1)
		}
		return soc, nil
	}
	return platforms.Experiment{
		Name: name, Description: desc, Platform: platform,
		Params: params, Variants: pingVariants, Metrics: pingMetrics,
		Repeats: 1, Seed: seed,
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			soc, err := build(spec.Params)
			if err != nil {
				return platforms.RunResult{}, err
			}
			return runPingPong(ctx, spec, soc)
		},
		Check: func(v map[string]float64) error { _, err := build(v); return err },
	}
}

var pingVariants = []platforms.Variant{
	{Name: PingLLSC, Doc: "Armv8.0 compare-and-exchange: LDXR, compare, STXR (no LSE: Cortex-A53/A72)"},
	{Name: PingCAS, Doc: "Armv8.1 LSE CAS: every attempt takes the line exclusively"},
	{Name: PingLdSt, Doc: "plain load-acquire, then store-release (LDAR, STLR): a read and an upgrade without the exclusive pair; against llsc on a board it shows whether the LDXR takes the line for writing"},
}

// runPingPong runs the ping-pong between cpu_a and cpu_b, two CPUs of soc.
func runPingPong(ctx context.Context, spec platforms.RunSpec, soc generic.SoC) (platforms.RunResult, error) {
	v := spec.Params
	a, b, n := int(v["cpu_a"]), int(v["cpu_b"]), int(v["rounds"])
	if spec.Variant != PingLLSC && spec.Variant != PingCAS && spec.Variant != PingLdSt {
		return platforms.RunResult{}, fmt.Errorf("pingpong: variant %q unknown; known: %s, %s, %s", spec.Variant, PingLLSC, PingCAS, PingLdSt)
	}
	e := sim.NewEngine(spec.Seed)
	defer e.Close()
	const base, size = sim.Addr(0x10000), 4096
	cores, mem, err := soc.Build(e, soc.NumCores(), base, size)
	if err != nil {
		return platforms.RunResult{}, err
	}
	flag, loop := base, int64(v["loop_cycles"])
	// flip waits until the word holds from, then swaps in to. Only one side
	// moves the word from a value, so ldst's plain pair is race-free.
	flip := func(p *sim.Proc, from, to uint64) {
		for {
			switch spec.Variant {
			case PingCAS:
				if _, ok := p.CAS(flag, from, to); ok {
					return
				}
			case PingLdSt:
				if p.Load(flag) == from {
					p.Store(flag, to)
					return
				}
			default:
				if p.LoadExclusive(flag) == from && p.StoreExclusive(flag, to) {
					return
				}
			}
			p.Compute(loop)
		}
	}
	var start, end sim.Time
	var misses uint64
	e.Spawn(cores[a], "ping", func(p *sim.Proc) {
		for i := range warmRounds + n {
			if i == warmRounds {
				start, misses = p.Now(), mem.Misses(flag)
			}
			flip(p, pong, ping)
		}
		end, misses = p.Now(), mem.Misses(flag)-misses
	})
	e.Spawn(cores[b], "pong", func(p *sim.Proc) {
		for range warmRounds + n {
			flip(p, ping, pong)
		}
	})
	// The word starts at ping (0): pong moves first, as in the benchmark.
	if err := e.Run(ctx); err != nil {
		return platforms.RunResult{}, err
	}
	rt := (end - start) / sim.Time(n)
	return platforms.RunResult{Metrics: map[string]float64{
		"one_way_ns":        rt.Nanos() / 2,
		"round_trip_ns":     rt.Nanos(),
		"transfers_per_hop": float64(misses) / float64(2*n),
	}}, nil
}
