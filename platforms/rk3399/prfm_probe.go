package rk3399

import (
	"context"
	"fmt"
	"slices"

	"synclab/platforms"
	"synclab/sim"
)

// The prefetch probe: does a core's prefetch for store take a line that it
// shares with another core? The Cortex-A53 manual says a preload fills a
// line only on a miss, so an A53's PRFM PSTL1STRM that finds its line shared
// does nothing; the A72's manual does not say, and a72_prfm_upgrade assumes
// that it takes the line owned, which decides TTAS against TAS in
// lock-scaling. Two cores read the same lines, one of them touches every
// line, and the other reads them again: if the touch took the lines, each
// re-read is a line transfer, else a hit in the reader's cache. A load
// (the lines stay shared) and a store (they move) bracket the answer, so a
// board's rows check the harness too.

func prfmProbeParams() platforms.Params {
	return append(Params(), pokerCPU(),
		platforms.Param{Key: "reader_cpu", Value: 5, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: "scenario",
			Doc: "CPU that reads the lines before and after the touch", Min: 0, Max: 5},
		platforms.Param{Key: "lines", Value: 64, Unit: "lines", Prov: platforms.CODE, Integer: true,
			Source: "scenario: 64 re-reads are 1.5 µs of hits or 6 µs of transfers, many ticks of the board's 24 MHz counter either way",
			Doc:    "cache lines read, touched and read again in each round", Min: 1, Max: 128},
		platforms.Param{Key: "probe_rounds", Value: 200, Unit: "rounds", Prov: platforms.CODE, Integer: true,
			Source: "scenario: the median of 200 rounds ignores the few that a tick lands in",
			Doc:    "rounds measured", Min: 1, Max: 10000},
	)
}

func prfmProbe() platforms.Experiment {
	return platforms.Experiment{
		Name: "rk3399-prfm-probe",
		Description: "Does a core's prefetch for store take a line it shares? Each round the reader on reader_cpu and then the poker on poker_cpu read " +
			"the same lines; the poker touches every line and the reader reads them again. reread_ns is the median over the rounds of one re-read: " +
			"a hit in the reader's cache when the lines stayed (a load never moves them), a line transfer when they moved (a store always does), " +
			"and after PRFM PSTL1STRM a transfer only if the prefetch upgrades a shared line: never on the model's A53s (their manual: a preload " +
			"fills a line only on a miss), on its A72s as a72_prfm_upgrade says. boardbench measures the same on a board, and lab calibrate " +
			"-fit a72_prfm_upgrade picks the answer its rows support.",
		Platform: "rk3399",
		Params:   prfmProbeParams(),
		Variants: []platforms.Variant{
			{Name: PokeLoad, Doc: "the poker loads each line: the lines stay shared and the re-reads hit (the control)"},
			{Name: PokeStore, Doc: "the poker stores to each line the value it holds: the lines move and the re-reads miss (the control)"},
			{Name: PokePrfm, Doc: "the poker prefetches each line for store (PRFM PSTL1STRM): the re-reads miss only if the prefetch upgrades a shared line"},
		},
		Repeats: 1, Seed: 12,
		Metrics: []platforms.Metric{
			{Name: "reread_ns", Unit: "ns", Better: platforms.Neither, Doc: "median over the rounds of the reader's second read of a line, per line (what a board measures)"},
		},
		Run:    runPrfmProbe,
		Check:  checkPrfmProbe,
		Traces: true,
	}
}

// checkPrfmProbe refuses values that cannot run: a bad parameter, or the
// poker and the reader on one CPU.
var checkPrfmProbe = checkPair("rk3399-prfm-probe", prfmProbeParams, "poker_cpu", "reader_cpu")

func runPrfmProbe(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	pr, err := startProbe("rk3399-prfm-probe", checkPrfmProbe, spec)
	if err != nil {
		return platforms.RunResult{}, err
	}
	defer pr.e.Close()
	e, cores, k, v, poke := pr.e, pr.cores, pr.k, pr.v, pr.poke
	n, rounds := int(v["lines"]), int(v["probe_rounds"])
	lines := make([]sim.Addr, n) // one word on each line, each line its own
	for i := range lines {
		if lines[i], err = k.Alloc(8); err != nil {
			return platforms.RunResult{}, err
		}
	}
	// The steps of a round, handed between the two threads through a word
	// on a line of its own, as boardbench's threads hand them: 3r, the
	// reader reads; 3r+1, the poker reads and touches; 3r+2, the reader
	// reads again, timed.
	step, err := k.Alloc(8)
	if err != nil {
		return platforms.RunResult{}, err
	}
	await := func(p *sim.Proc, want uint64) { p.SpinUntil(step, 20, func(x uint64) bool { return x == want }) }
	readAll := func(p *sim.Proc) {
		for _, a := range lines {
			p.Load(a)
		}
	}
	reread := make([]float64, rounds) // ns per line
	e.Spawn(cores[int(v["reader_cpu"])], "reader", func(p *sim.Proc) {
		for r := range uint64(rounds) {
			await(p, 3*r)
			readAll(p)
			p.Store(step, 3*r+1)
			await(p, 3*r+2)
			start := p.Now()
			readAll(p)
			reread[r] = (p.Now() - start).Nanos() / float64(n)
			p.Store(step, 3*r+3)
		}
	})
	e.Spawn(cores[int(v["poker_cpu"])], "poker", func(p *sim.Proc) {
		for r := range uint64(rounds) {
			await(p, 3*r+1)
			readAll(p)
			for _, a := range lines {
				poke(p, a)
			}
			p.Store(step, 3*r+2)
		}
	})
	e.Until = sim.Second + sim.Time(rounds)*2*sim.Millisecond // a round takes microseconds, at most 1 ms
	if err := e.Run(ctx); err != nil {
		return platforms.RunResult{}, err
	}
	if e.StopReason() != "done" {
		return platforms.RunResult{}, fmt.Errorf("rk3399-prfm-probe: run did not finish by %v: %s", e.Until, e.Waiters())
	}
	slices.Sort(reread)
	median := (reread[(rounds-1)/2] + reread[rounds/2]) / 2
	return platforms.RunResult{Metrics: map[string]float64{"reread_ns": median}, Trace: e.Trace}, nil
}
