package rk3399

import (
	"fmt"

	"synclab/platforms"
	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// WorkloadParams returns the workload parameters of the spinlock
// experiments. The article gives none of the lengths (only "70% load" and
// "mixed interrupt/process-context contention"), so they are ASSUME with
// wide plausible ranges; none is tuned to the article's numbers.
func WorkloadParams() platforms.Params {
	const art = "arm-spinlock-wfe-vs-wfi.zh.txt section 3"
	return platforms.Params{
		{Key: "load", Value: 0.7, Unit: "", Prov: platforms.MEAS, Source: art + " (负载达到70%)",
			Doc: "share of time each thread is busy (work + critical section) when it never waits; it sleeps the rest", Min: 0.01, Max: 1},
		{Key: "cs_us", Value: 10, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "process-context critical section", Min: 0, Max: 10000, Low: 1, High: 100},
		{Key: "outside_us", Value: 90, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "mean (exponential) work between critical sections", Min: 0, Max: 100000, Low: 10, High: 1000},
		{Key: "irq_mean_us", Value: 1000, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article; a 1 kHz device",
			Doc: "mean gap of the Poisson device interrupt whose handler takes the lock (0: none)", Min: 0, Max: 1e6, Low: 100, High: 10000},
		{Key: "irq_cs_us", Value: 5, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "critical section in the interrupt handler", Min: 0, Max: 1000, Low: 1, High: 50},
		{Key: "irq_cpu", Value: 0, Unit: "cpu", Prov: platforms.CODE, Source: "kernel/irq/manage.c: SPIs default to the boot CPU's affinity without irqbalance",
			Doc: "CPU the device interrupt is routed to", Min: 0, Max: 63},
		{Key: "cores", Value: 6, Unit: "cores", Prov: platforms.MEAS, Source: art + " (RK3399: 2 x A72 + 4 x A53, all used)",
			Doc: "CPUs running a contending thread (cpu0..n-1: A53s first, as Linux numbers them)", Min: 1, Max: 6},
		{Key: "duration_ms", Value: 1000, Unit: "ms", Prov: platforms.ASSUME, Source: "run length; long enough for ~250 ticks at HZ=250",
			Doc: "simulated time threads keep starting operations", Min: 1, Max: 60000, Low: 500, High: 5000},
		// lock indexes linux.Flavours.
		{Key: "lock", Value: 0, Unit: "code", Prov: platforms.CODE, Source: "arch/arm64/Kconfig ARCH_USE_QUEUED_SPINLOCKS (5.10)",
			Doc: "lock algorithm: 0 qspinlock (arm64 5.10), 1 ticket (arm32), 2 test-and-set, 3 test-and-test-and-set", Choices: []float64{0, 1, 2, 3}},
		{Key: "relax_cycles", Value: 20, Unit: "cycles", Prov: platforms.ASSUME, Source: "no source; ldr + cmp + b + yield",
			Doc: "one poll iteration of a busy-wait (cpu_relax)", Min: 1, Max: 10000, Low: 5, High: 100},
		{Key: "spin_limit", Value: 100, Unit: "polls", Prov: platforms.ASSUME, Source: "article 4.2/6 SPIN_THRESHOLD, value not given",
			Doc: "adaptive and tiered: polls before WFE", Min: 0, Max: 1e6, Low: 10, High: 1000},
		{Key: "wfe_limit", Value: 10, Unit: "wakeups", Prov: platforms.ASSUME, Source: "article 6 SLEEP_THRESHOLD, value not given",
			Doc: "tiered: WFE wake-ups before schedule()", Min: 0, Max: 1e6, Low: 2, High: 100},
		{Key: "lose_wake", Value: 0, Unit: "prob", Prov: platforms.ASSUME, Source: "article 5: a SoC whose SEV lost wake-ups (rate not given)",
			Doc: "probability that each wake-up event (SEV or monitor clear) is lost on its way to a core", Min: 0, Max: 1, Low: 0, High: 0.5},
		{Key: "redundant_sev", Value: 0, Unit: "bool", Prov: platforms.CODE, Source: "article 5 workaround (extra SEV after release)",
			Doc: "1: every release sends an extra SEV", Choices: []float64{0, 1}},
	}
}

// AllParams returns the platform and workload parameters together.
func AllParams() platforms.Params { return append(Params(), WorkloadParams()...) }

// SpinlockWait builds the rk3399-spinlock-wait workload for wait mode m from
// parameter values v (AllParams keys), checking each value.
func SpinlockWait(v map[string]float64, m linux.Mode) (Workload, error) {
	if err := WorkloadParams().SetFrom(v, true); err != nil {
		return Workload{}, fmt.Errorf("rk3399: %w", err)
	}
	soc, err := SoC(v)
	if err != nil {
		return Workload{}, err
	}
	return Build(v, soc, linux.Flavours[int(v["lock"])], m)
}

// Build builds the spinlock workload on soc with lock flavour f and wait
// mode m from values v, which the caller has checked: the keys of
// WorkloadParams but lock, and those Kernel reads. Validate then checks
// cores and irq_cpu against soc, so another SoC (lock-scaling's generic
// N-core part) can take the RK3399's place.
func Build(v map[string]float64, soc generic.SoC, f linux.Flavour, m linux.Mode) (Workload, error) {
	us := func(k string) sim.Time { return sim.Time(v[k] * float64(sim.Microsecond)) }
	w := Workload{
		SoC: soc, Kernel: Kernel(v), Cores: int(v["cores"]), Flavour: f,
		Wait: linux.Wait{Mode: m, RelaxCycles: int64(v["relax_cycles"]), SpinLimit: int(v["spin_limit"]),
			WFELimit: int(v["wfe_limit"]), RedundantSEV: v["redundant_sev"] != 0},
		Load: v["load"], CS: us("cs_us"), Outside: us("outside_us"),
		IRQMean: us("irq_mean_us"), IRQCPU: int(v["irq_cpu"]), IRQCS: us("irq_cs_us"),
		Duration: us("duration_ms") * 1000, LoseWake: v["lose_wake"],
	}
	return w, w.Validate()
}
