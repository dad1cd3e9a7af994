package rk3399

import (
	"context"
	"fmt"
	"maps"

	"synclab/platforms"
	"synclab/platforms/linux"
	"synclab/sim"
)

// The monitor probe: does a core's exclusive monitor go with its line?
// The architecture leaves it to the implementation whether another core
// taking the line for writing without a store (the PRFM PSTL1STRM every
// Linux LL/SC atomic begins with) clears a WFE waiter's monitor, and so
// wakes it. monitor_loss assumes it does not. A waiter that re-arms its
// monitor after every wake, and a poker that touches the line at a fixed
// rate, tell the two apart on a board: the waiter wakes at the poker's rate
// when the monitor goes with the line, at the event stream's (and its
// ticks') otherwise. A plain load (never a clear) and a store (always one)
// bracket the answer, so a board's rows check the harness too.

// Probe variants: what the poker does to the waiter's line.
const (
	PokeLoad  = "load"  // LDR: the line goes shared, the monitor stays
	PokeStore = "store" // STR of the value the word holds: a store clears every monitor
	PokePrfm  = "prfm"  // PRFM PSTL1STRM: the line goes, the monitor only with monitor_loss
)

// pokeOf returns what the poker of experiment exp does to a word of the
// line under test in variant: a load, a store of the value the word holds
// (the probes' words hold 0), or a prefetch for store.
func pokeOf(exp, variant string) (func(p *sim.Proc, a sim.Addr), error) {
	switch variant {
	case PokeLoad:
		return func(p *sim.Proc, a sim.Addr) { p.Load(a) }, nil
	case PokeStore:
		return func(p *sim.Proc, a sim.Addr) { p.Store(a, 0) }, nil
	case PokePrfm:
		return (*sim.Proc).PrefetchStore, nil
	}
	return nil, fmt.Errorf("%s: unknown variant %q (want %s, %s or %s)", exp, variant, PokeLoad, PokeStore, PokePrfm)
}

func probeParams() platforms.Params {
	return append(Params(), pokerCPU(),
		platforms.Param{Key: "waiter_cpu", Value: 5, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: "scenario",
			Doc: "CPU of the waiter", Min: 0, Max: 5},
		platforms.Param{Key: "poke_us", Value: 10, Unit: "us", Prov: platforms.CODE,
			Source: "scenario: 100 pokes per ms against the event stream's 11.7 wake-ups, so the two answers differ ninefold",
			Doc:    "time between two pokes of the waiter's line", Min: 0.1, Max: 10000},
		platforms.Param{Key: "probe_ms", Value: 100, Unit: "ms", Prov: platforms.CODE,
			Source: "scenario: about 1,200 event-stream wake-ups, enough for a rate within 3%",
			Doc:    "length of the probe", Min: 1, Max: 10000},
	)
}

// pokerCPU is the CPU of the probes' poker, one of the A72s.
func pokerCPU() platforms.Param {
	return platforms.Param{Key: "poker_cpu", Value: 4, Unit: "cpu", Prov: platforms.CODE, Integer: true, Source: "scenario",
		Doc: "CPU of the poker, which touches the line under test", Min: 0, Max: 5}
}

func monitorProbe() platforms.Experiment {
	return platforms.Experiment{
		Name: "rk3399-monitor-probe",
		Description: "Does a core's exclusive monitor go with its line? A waiter on waiter_cpu loops STR (beside the word: its line), LDAXR, WFE on a word no one changes; " +
			"poker_cpu touches the word's line every poke_us for probe_ms. A load never clears the waiter's monitor, a store always does, " +
			"a PRFM PSTL1STRM only if the monitor goes with the line (monitor_loss): wakes_per_ms is then the poke rate, else the event stream's " +
			"and the ticks'. boardbench measures the same on a board, and lab calibrate -fit monitor_loss picks the answer its rows support.",
		Platform: "rk3399",
		Params:   probeParams(),
		Variants: []platforms.Variant{
			{Name: PokeLoad, Doc: "the poker loads the word: the line goes shared and no monitor is cleared (the control)"},
			{Name: PokeStore, Doc: "the poker stores the value the word holds: a store clears the waiter's monitor and wakes it (the control)"},
			{Name: PokePrfm, Doc: "the poker prefetches the line for store (PRFM PSTL1STRM): the line leaves the waiter, its monitor only with monitor_loss=1"},
		},
		Repeats: 1, Seed: 11,
		Metrics: []platforms.Metric{
			{Name: "wakes_per_ms", Unit: "/ms", Better: platforms.Neither, Doc: "the waiter's returns from WFE per ms, whatever woke it (what a board counts)"},
			{Name: "pokes_per_ms", Unit: "/ms", Better: platforms.Neither, Doc: "the poker's touches of the line per ms: 1000 / poke_us unless a poke takes longer than poke_us"},
			{Name: "event_wakes_per_ms", Unit: "/ms", Better: platforms.Neither, Doc: "wake-ups by a cleared monitor (or an SEV) per ms: the model's share of wakes_per_ms that the pokes caused"},
			{Name: "stream_wakes_per_ms", Unit: "/ms", Better: platforms.Neither, Doc: "wake-ups by the event stream per ms"},
		},
		Run:    runMonitorProbe,
		Check:  checkMonitorProbe,
		Traces: true,
	}
}

// checkMonitorProbe refuses values that cannot run: a bad parameter, or the
// poker and the waiter on one CPU.
var checkMonitorProbe = checkPair("rk3399-monitor-probe", probeParams, "poker_cpu", "waiter_cpu")

// probeRun is what a probe's run starts from: its values, the poker's
// touch of its variant, and the booted RK3399.
type probeRun struct {
	v     map[string]float64
	poke  func(p *sim.Proc, a sim.Addr)
	e     *sim.Engine
	cores []*sim.Core
	k     *linux.Kernel
}

// startProbe checks spec's values with check, picks the touch of its
// variant and boots the RK3399 for probe name; the caller closes the
// engine.
func startProbe(name string, check func(map[string]float64) error, spec platforms.RunSpec) (probeRun, error) {
	v := maps.Clone(spec.Params)
	if err := check(v); err != nil {
		return probeRun{}, err
	}
	poke, err := pokeOf(name, spec.Variant)
	if err != nil {
		return probeRun{}, err
	}
	e, cores, k, err := boot(spec, v)
	return probeRun{v, poke, e, cores, k}, err
}

func runMonitorProbe(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	pr, err := startProbe("rk3399-monitor-probe", checkMonitorProbe, spec)
	if err != nil {
		return platforms.RunResult{}, err
	}
	defer pr.e.Close()
	e, cores, k, v, poke := pr.e, pr.cores, pr.k, pr.v, pr.poke
	// One line: the word (0 while the probe runs, 1 to stop the waiter),
	// and beside it the waiter's own.
	word, err := k.Alloc(16)
	if err != nil {
		return platforms.RunResult{}, err
	}
	own := word + 8
	waiter := cores[int(v["waiter_cpu"])]
	gap := sim.Time(v["poke_us"] * float64(sim.Microsecond))
	length := sim.Time(v["probe_ms"] * float64(sim.Millisecond))
	var wakes, pokes int
	var start, end sim.Time
	e.Spawn(waiter, "waiter", func(p *sim.Proc) {
		// Each round first takes the line for writing (a store beside
		// the word), so the poker's next prefetch misses: a Cortex-A53's
		// PRFM PST that hits a shared copy does nothing (DDI 0500D,
		// 6.6.1), and the probe would otherwise test one poke only.
		for {
			p.Store(own, 0)
			if p.LoadExclusive(word) != 0 {
				break
			}
			p.WFE()
			wakes++
		}
	})
	e.Spawn(cores[int(v["poker_cpu"])], "poker", func(p *sim.Proc) {
		// On a fixed schedule, as boardbench's poker reads the clock: a
		// tick's handler delays one poke, not the rest.
		start = p.Now()
		for next := start + gap; next <= start+length; next += gap {
			if d := next - p.Now(); d > 0 {
				p.Delay(d)
			}
			poke(p, word)
			pokes++
		}
		if d := start + length - p.Now(); d > 0 {
			p.Delay(d) // the window is probe_ms, with or without a poke in it
		}
		end = p.Now()
		p.Store(word, 1)
	})
	e.Until = 2*length + sim.Second
	if err := e.Run(ctx); err != nil {
		return platforms.RunResult{}, err
	}
	if e.StopReason() != "done" {
		return platforms.RunResult{}, fmt.Errorf("rk3399-monitor-probe: run did not finish by %v: %s", e.Until, e.Waiters())
	}
	ms := (end - start).Millis()
	return platforms.RunResult{Metrics: map[string]float64{
		"wakes_per_ms":        float64(wakes) / ms,
		"pokes_per_ms":        float64(pokes) / ms,
		"event_wakes_per_ms":  float64(waiter.Wakeups[sim.WakeEvent]) / ms,
		"stream_wakes_per_ms": float64(waiter.Wakeups[sim.WakeEventStream]) / ms,
	}, Trace: e.Trace}, nil
}
