package generic_test

import (
	"context"
	"fmt"

	"synclab/platforms/generic"
	"synclab/platforms/rk3399"
	"synclab/sim"
)

// A hypothetical 10-core part made of the RK3399's Cortex-A72 cluster,
// as the lock-scaling experiment builds it: clusters of four, the last one
// taking the rest, with the RK3399's latencies. A part the simulator
// cannot hold is refused before anything is built.
func ExampleNCore() {
	rk, err := rk3399.SoC(rk3399.Defaults())
	if err != nil {
		panic(err)
	}
	a72 := rk.Clusters[1]
	soc, err := generic.NCore("a72x10", 10, 4, a72, rk)
	if err != nil {
		panic(err)
	}
	fmt.Println(soc.Name, "has", soc.NumCores(), "cores")
	for _, c := range soc.Clusters {
		fmt.Printf("%s: %d x %s at %d MHz\n", c.Name, c.Cores, c.Core, c.MHz)
	}

	_, err = generic.NCore("a72x100", 100, 4, a72, rk)
	fmt.Println(err)
	// Output:
	// a72x10 has 10 cores
	// big0: 4 x Cortex-A72 at 1800 MHz
	// big1: 4 x Cortex-A72 at 1800 MHz
	// big2: 2 x Cortex-A72 at 1800 MHz
	// generic soc "a72x100": n = 100 out of range [1, 64]
}

// Build turns the description into simulated cores and memory. A cache
// line written by core 0 costs a reader in its cluster SameCluster and a
// reader in the next cluster OtherCluster: the topology that makes a lock's
// hand-off cheaper between neighbours.
func ExampleSoC_Build() {
	tmpl := generic.Cluster{Name: "c", Core: "X", OPPs: []generic.OPP{{MHz: 1000, MilliVolt: 900}}, MHz: 1000,
		DynCoeff: 100, StaticMW: 10, SpinShare: 0.8, IRQEntry: 300, IRQExit: 200, WakeCycles: 30, HitCycles: 4}
	soc, err := generic.NCore("two-clusters", 8, 4, tmpl, generic.SoC{LineSize: 64,
		SameCluster: 100 * sim.Nanosecond, OtherCluster: 250 * sim.Nanosecond, DRAM: 120 * sim.Nanosecond})
	if err != nil {
		panic(err)
	}
	e := sim.NewEngine(1)
	defer e.Close()
	cores, _, err := soc.Build(e, soc.NumCores(), 0x1000, 4096)
	if err != nil {
		panic(err)
	}
	// run runs fn alone on core c and returns how long it took.
	run := func(c *sim.Core, fn func(p *sim.Proc)) sim.Time {
		var took sim.Time
		e.Spawn(c, "step", func(p *sim.Proc) {
			t0 := p.Now()
			fn(p)
			took = p.Now() - t0
		})
		if err := e.Run(context.Background()); err != nil {
			panic(err)
		}
		return took
	}
	// Two lines, each written by core 0, then read by core 1 (its cluster)
	// or core 4 (the next cluster).
	const near, far = sim.Addr(0x1000), sim.Addr(0x1040)
	fmt.Println("first write (from DRAM):", run(cores[0], func(p *sim.Proc) { p.Store(near, 1) }))
	run(cores[0], func(p *sim.Proc) { p.Store(far, 1) })
	fmt.Printf("read by core 1 (cluster %d): %v\n", cores[1].Cfg.Cluster, run(cores[1], func(p *sim.Proc) { p.Load(near) }))
	fmt.Printf("read by core 4 (cluster %d): %v\n", cores[4].Cfg.Cluster, run(cores[4], func(p *sim.Proc) { p.Load(far) }))
	// Output:
	// first write (from DRAM): 120ns
	// read by core 1 (cluster 0): 100ns
	// read by core 4 (cluster 1): 250ns
}
