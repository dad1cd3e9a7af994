package rk3399_test

import (
	"context"
	"fmt"
	"slices"

	"synclab/platforms"
	"synclab/platforms/linux"
	"synclab/platforms/rk3399"
)

// The article's experiment at its default parameters, one run per wait
// instruction: a release wakes a WFE waiter within microseconds, while a
// WFI waiter sleeps until its next scheduler tick, a good part of a tick
// period, and throughput collapses with it.
func ExampleExperiments() {
	exps := rk3399.Experiments()
	exp := exps[slices.IndexFunc(exps, func(e platforms.Experiment) bool { return e.Name == "rk3399-spinlock-wait" })]
	tick := rk3399.Kernel(rk3399.Defaults()).TickPeriod()
	for _, variant := range []string{"wfe", "wfi"} {
		r, err := exp.Run(context.Background(), platforms.RunSpec{Experiment: exp.Name, Variant: variant, Params: exp.PointParams(0), Seed: exp.Seed})
		if err != nil {
			panic(err)
		}
		m := r.Metrics
		fmt.Printf("%s: mean lock wait %.3g ms (%.2g of a %v tick), %.3g ops/s, mutual exclusion held: %v\n",
			variant, m["avg_lock_wait_ms"], m["avg_lock_wait_ms"]/tick.Millis(), tick, m["throughput_ops_s"], m["counter"] == m["expected_counter"])
	}
	// Output:
	// wfe: mean lock wait 0.00311 ms (0.00078 of a 4ms tick), 4.15e+04 ops/s, mutual exclusion held: true
	// wfi: mean lock wait 2.4 ms (0.6 of a 4ms tick), 2.38e+03 ops/s, mutual exclusion held: true
}

// The model's topology at its default parameters: every number comes from
// a Param (see Params for their sources), so changing a value, such as the
// A72 cluster's clock, yields another RK3399 to simulate.
func ExampleSoC() {
	soc, err := rk3399.SoC(rk3399.Defaults())
	if err != nil {
		panic(err)
	}
	for _, c := range soc.Clusters {
		busy, err := c.BusyMW()
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %d x %s at %d MHz, %.0f mW busy\n", c.Name, c.Cores, c.Core, c.MHz, busy)
	}
	fmt.Println("line transfer in a cluster:", soc.SameCluster, "across:", soc.OtherCluster)
	fmt.Println("event stream every", soc.EventStream)

	// A clock that is not one of the cluster's operating points is refused.
	v := rk3399.Defaults()
	v["a72_mhz"] = 2000
	_, err = rk3399.SoC(v)
	fmt.Println(err)
	// Output:
	// little: 4 x Cortex-A53 at 1416 MHz, 194 mW busy
	// big: 2 x Cortex-A72 at 1800 MHz, 1210 mW busy
	// line transfer in a cluster: 100ns across: 250ns
	// event stream every 85.3333us
	// rk3399: parameter a72_mhz: value 2000 not allowed; choose one of 408, 600, 816, 1008, 1200, 1416, 1608, 1800
}

// The article's workload built from the default values, shortened to 20
// ms, run with threads waiting in WFE: the building block under the
// rk3399-spinlock-wait experiment, for a program of one's own.
func ExampleSpinlockWait() {
	v := rk3399.Defaults()
	v["duration_ms"] = 20
	w, err := rk3399.SpinlockWait(v, linux.WFE)
	if err != nil {
		panic(err)
	}
	r, err := w.Run(context.Background(), 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d CPUs, %d critical sections, mutual exclusion held: %v, at most %d holder\n", w.Cores, r.Ops, r.Counter == uint64(r.Ops), r.MaxHolders)
	// Output:
	// 6 CPUs, 852 critical sections, mutual exclusion held: true, at most 1 holder
}

// The prefetch probe on the A72 pair under both answers to its question:
// the load and store rows bracket it (a hit, a line transfer), and the
// prfm row reads like one of them. A board's rows pick the answer
// (lab calibrate -fit a72_prfm_upgrade).
func Example_prfmProbe() {
	exps := rk3399.Experiments()
	exp := exps[slices.IndexFunc(exps, func(e platforms.Experiment) bool { return e.Name == "rk3399-prfm-probe" })]
	for _, upgrade := range []string{"0", "1"} {
		e, err := exp.WithSettings("a72_prfm_upgrade=" + upgrade)
		if err != nil {
			panic(err)
		}
		fmt.Printf("a72_prfm_upgrade=%s:", upgrade)
		for _, v := range e.VariantNames() {
			r, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: v, Params: e.Params.Values(), Seed: e.Seed})
			if err != nil {
				panic(err)
			}
			fmt.Printf(" %s %.3g ns", v, r.Metrics["reread_ns"])
		}
		fmt.Println()
	}
	// Output:
	// a72_prfm_upgrade=0: load 2.22 ns store 100 ns prfm 2.22 ns
	// a72_prfm_upgrade=1: load 2.22 ns store 100 ns prfm 100 ns
}
