package platforms_test

import (
	"fmt"

	"synclab/platforms"
)

// A model's numbers are declared with where they come from, so that a
// reader can tell a cited constant from a guess, and sensitivity runs know
// which values to sweep: an ASSUME parameter carries its plausible range.
func ExampleParams() {
	ps := platforms.Params{
		{Key: "hz", Value: 250, Unit: "Hz", Prov: platforms.CODE, Source: "arch/arm64/configs/defconfig: HZ_250",
			Doc: "scheduler tick rate", Choices: []float64{100, 250, 300, 1000}},
		{Key: "tick_us", Value: 4000, Unit: "us", Prov: platforms.DERIVED, Source: "1/hz",
			Doc: "tick period", Min: 1000, Max: 10000},
		{Key: "c2c_ns", Value: 90, Unit: "ns", Prov: platforms.MEAS, Source: "nviennot/core-to-core-latency, RPi 4",
			Doc: "cache-line transfer between two cores", Min: 1, Max: 1000},
		{Key: "isr_enter_cycles", Value: 290, Unit: "cycles", Prov: platforms.BOUND, Source: "IDF_PERFORMANCE_MAX_ISR_ENTER_CYCLES",
			Doc: "interrupt entry, at most", Integer: true, Min: 10, Max: 2000},
		{Key: "cs_us", Value: 10, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "critical section", Min: 0, Max: 10000, Low: 1, High: 100},
	}
	for _, p := range ps {
		fmt.Printf("%s = %g %s (%s: %s)\n", p.Key, p.Value, p.Unit, p.Prov, p.Source)
	}
	for _, p := range ps {
		if p.Prov == platforms.ASSUME {
			fmt.Printf("sensitivity sweeps %s over %g..%g %s\n", p.Key, p.Low, p.High, p.Unit)
		}
	}
	// A model reads a value by key; an unknown key there is a bug, and panics.
	fmt.Println("interrupt entry at most", ps.Get("isr_enter_cycles"), "cycles")
	// Output:
	// hz = 250 Hz (CODE: arch/arm64/configs/defconfig: HZ_250)
	// tick_us = 4000 us (DERIVED: 1/hz)
	// c2c_ns = 90 ns (MEAS: nviennot/core-to-core-latency, RPi 4)
	// isr_enter_cycles = 290 cycles (BOUND: IDF_PERFORMANCE_MAX_ISR_ENTER_CYCLES)
	// cs_us = 10 us (ASSUME: not in the article)
	// sensitivity sweeps cs_us over 1..100 us
	// interrupt entry at most 290 cycles
}

// User input goes through Set, which refuses a value the parameter does not
// accept with an error naming the key, the value and what is allowed, and
// leaves the old value in place.
func ExampleParams_Set() {
	ps := platforms.Params{
		{Key: "hz", Value: 250, Unit: "Hz", Choices: []float64{100, 250, 300, 1000}},
		{Key: "cores", Value: 4, Unit: "cores", Integer: true, Min: 1, Max: 64},
	}
	fmt.Println(ps.Set("hz", 1000))
	fmt.Println(ps.Set("hz", 500))
	fmt.Println(ps.Set("cores", 2.5))
	fmt.Println(ps.Set("cores", 128))
	fmt.Println(ps.Set("core", 8))
	fmt.Println(ps.Values())
	// Output:
	// <nil>
	// parameter hz: value 500 not allowed; choose one of 100, 250, 300, 1000
	// parameter cores: value 2.5 is not a whole number
	// parameter cores: value 128 out of range [1, 64] cores
	// unknown parameter "core"; known: cores, hz
	// map[cores:4 hz:1000]
}

// Validate checks a definition as a whole (names, defaults, sweep values).
// With overrides one parameter and returns a copy, so the definition others
// share is left as it was; a value the parameter does not accept is an
// error naming the experiment and the key.
func ExampleExperiment_With() {
	exp := platforms.Experiment{
		Name:     "demo",
		Platform: "board",
		Params: platforms.Params{
			{Key: "hz", Value: 250, Unit: "Hz", Prov: platforms.CODE, Source: "torvalds/linux kernel/Kconfig.hz", Choices: []float64{100, 250, 300, 1000}},
		},
		Variants: []platforms.Variant{{Name: "wfe"}, {Name: "wfi"}},
		Metrics:  []platforms.Metric{{Name: "wait_ms", Unit: "ms", Better: platforms.Lower}},
		Repeats:  3,
	}
	fmt.Println("valid:", exp.Validate())
	fast, err := exp.With("hz", 1000)
	if err != nil {
		panic(err)
	}
	fmt.Println("copy:", fast.Params.Get("hz"), "original:", exp.Params.Get("hz"))
	_, err = exp.With("hz", 500)
	fmt.Println(err)
	// Output:
	// valid: <nil>
	// copy: 1000 original: 250
	// experiment demo: parameter hz: value 500 not allowed; choose one of 100, 250, 300, 1000
}
