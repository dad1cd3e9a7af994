package rk3399

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"synclab/platforms"
	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// Experiments returns the spinlock experiments of article 2 (WFE vs WFI in
// the wait loop, per-CPU locks) on the RK3399 model, and lock-scaling, which
// replicates the RK3399's A72 cluster on the generic N-core builder.
func Experiments() []platforms.Experiment {
	return []platforms.Experiment{spinlockWait(), perCPUSplit(), lockScaling(), pingPong(), genericPingPong(), wake(), monitorProbe(), prfmProbe()}
}

var waitMetrics = []platforms.Metric{
	{Name: "avg_lock_wait_ms", Unit: "ms", Better: platforms.Lower, Doc: "mean time from the first lock attempt to holding the lock, over all acquisitions (process and interrupt context). WFE: queueing behind holders plus the hand-off, the WFE wake and about three line transfers (the release, the reload, the claim); WFI: the time to the waiter's next interrupt, mostly its next scheduler tick, since a release never wakes WFI: half a tick period for a waiter that arrives at a random time, most of a period for one that queues behind a sleeping waiter, so the mean over all acquisitions lies above half a period"},
	{Name: "p99_lock_wait_ms", Unit: "ms", Better: platforms.Lower, Doc: "99th percentile of the lock wait (type 7, as NumPy's default; from a log-bucketed histogram, within 0.4% of the exact sample's)"},
	{Name: "max_lock_wait_ms", Unit: "ms", Better: platforms.Lower, Doc: "longest lock wait (WFI: bounded by one tick period plus queueing)"},
	{Name: "throughput_ops_s", Unit: "ops/s", Better: platforms.Higher, Doc: "critical sections per second: set by the offered load (threads x load / (cs + outside), plus the interrupt handler's sections, one per irq_mean_us) while waits are short; each thread is a closed loop, so long waits cut it"},
	{Name: "power_mw", Unit: "mW", Better: platforms.Lower, Doc: "mean power of the used cores: P = C*V^2*f + leakage while executing, leakage only in WFE/WFI, none in CPU_SLEEP; WFI waiters sleep clock-gated, so waiting longer does not cost more here"},
	{Name: "energy_mj", Unit: "mJ", Better: platforms.Lower, Doc: "energy of the used cores over the run"},
	{Name: "stall_pct", Unit: "%", Better: platforms.Lower, Doc: "share of the used cores' time spent waiting for the lock (the article's perf 'stall' share)"},
	{Name: "contended_pct", Unit: "%", Better: platforms.Lower, Doc: "share of acquisitions that found the lock taken and entered the lock's slow path (lockstat contentions / acquisitions): set by how often a thread arrives while another holds the lock (offered load x cores, critical-section share) and how long waits stretch holds; the uncontended fast path's own line transfer does not count"},
	{Name: "irq_max_wait_us", Unit: "us", Better: platforms.Lower, Doc: "longest lock wait of the device interrupt handler"},
	{Name: "counter", Unit: "", Better: platforms.Neither, Doc: "increments of the shared counter done inside the lock (read from sim memory)"},
	{Name: "expected_counter", Unit: "", Better: platforms.Neither, Doc: "increments the code performed; equal to counter unless mutual exclusion broke"},
	{Name: "wakeups_event", Unit: "", Better: platforms.Neither, Doc: "WFE wake-ups by an event (a cleared exclusive monitor or SEV)"},
	{Name: "wakeups_event_stream", Unit: "", Better: platforms.Neither, Doc: "WFE wake-ups by the architected timer's event stream"},
	{Name: "ticks", Unit: "", Better: platforms.Neither, Doc: "scheduler ticks handled (NO_HZ_IDLE stops them on idle CPUs)"},
}

func metrics(w Workload, r Result) map[string]float64 {
	m := map[string]float64{
		"avg_lock_wait_ms":     r.Waits.Mean().Millis(),
		"p99_lock_wait_ms":     p99(&r.Waits) / float64(sim.Millisecond),
		"max_lock_wait_ms":     r.Waits.Max().Millis(),
		"throughput_ops_s":     float64(r.Ops) / r.Elapsed.Seconds(),
		"power_mw":             r.PowerMW,
		"energy_mj":            r.EnergyMJ,
		"stall_pct":            r.StallPct(w.Cores),
		"contended_pct":        100 * float64(r.Contended) / float64(max(r.Ops, 1)),
		"irq_max_wait_us":      r.IRQWaits.Max().Micros(),
		"counter":              float64(r.Counter),
		"expected_counter":     float64(r.Ops),
		"wakeups_event":        float64(r.Wakeups[sim.WakeEvent.String()]),
		"wakeups_event_stream": float64(r.Wakeups[sim.WakeEventStream.String()]),
		"ticks":                float64(r.Ticks),
	}
	return m
}

// p99 is the 99th percentile of h in picoseconds, 0 when h is empty.
func p99(h *sim.Histogram) float64 {
	if h.Count() == 0 {
		return 0
	}
	return h.Percentile(99)
}

// traceWindow is the window a traced RK3399 run records: early in the run,
// long enough for a few ticks.
const traceWindow = 20 * sim.Millisecond

// checkSpinlockWait checks that values v go together (cores and irq_cpu, the
// lengths of a thread's cycle), as every variant's run would.
func checkSpinlockWait(v map[string]float64) error { _, err := SpinlockWait(v, linux.WFE); return err }

func runWait(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	mode, err := linux.ParseMode(spec.Variant)
	if err != nil {
		return platforms.RunResult{}, err
	}
	w, err := SpinlockWait(spec.Params, mode)
	if err != nil {
		return platforms.RunResult{}, err
	}
	w.Trace = spec.NewTrace(0, traceWindow)
	r, err := w.Run(ctx, spec.Seed)
	if err != nil {
		return platforms.RunResult{}, err
	}
	return platforms.RunResult{Metrics: withOS(metrics(w, r), w, r), Trace: w.Trace, Events: r.Events, Switches: r.Switches}, nil
}

func runSplit(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	mode := linux.WFE
	if spec.Variant == "global-wfi" {
		mode = linux.WFI
	}
	w, err := SpinlockWait(spec.Params, mode)
	if err != nil {
		return platforms.RunResult{}, err
	}
	switch spec.Variant {
	case "global", "global-wfi":
	case "percpu":
		w.Split = true
	case "percluster":
		w.Split, w.PerCluster = true, true
	default:
		return platforms.RunResult{}, fmt.Errorf("per-cpu-split: variant %q unknown; known: global-wfi, global, percluster, percpu", spec.Variant)
	}
	w.Trace = spec.NewTrace(0, traceWindow)
	r, err := w.Run(ctx, spec.Seed)
	if err != nil {
		return platforms.RunResult{}, err
	}
	return platforms.RunResult{Metrics: withOS(metrics(w, r), w, r), Trace: w.Trace, Events: r.Events, Switches: r.Switches}, nil
}

// scalingParams are the lock-scaling workload: every thread hammers one lock
// with short sections and little work between them. The run keeps only the
// RK3399's A72 cluster and takes the lock from the variant, so the A53 and
// lock parameters, which would change nothing, are left out.
func scalingParams() platforms.Params {
	ps := slices.DeleteFunc(AllParams(), func(p platforms.Param) bool {
		switch p.Key {
		case "a53_mhz", "a53_dyn_coeff", "a53_static_mw", "lock":
			return true
		}
		return false
	})
	for i := range ps {
		p := &ps[i]
		switch p.Key {
		case "load":
			p.Value, p.Prov, p.Low, p.High = 1, platforms.CODE, 0, 0
			p.Source = "lock-scaling's workload: every thread always busy (high contention)"
		case "cs_us":
			// The workload's own choice, not the spinlock-wait ranges: a
			// section about the length of a few line transfers, so the
			// hand-off dominates (high contention).
			p.Value, p.Prov, p.Low, p.High = 0.5, platforms.CODE, 0, 0
			p.Source = "lock-scaling's workload: a 0.5 µs section, a few line transfers long, so lock hand-offs dominate"
		case "outside_us":
			p.Value, p.Prov, p.Low, p.High = 1, platforms.CODE, 0, 0
			p.Source = "lock-scaling's workload: 1 µs of work between sections, so every thread is back at the lock within a few hand-offs"
		case "irq_mean_us":
			p.Value = 0
			p.Source = "lock-scaling's workload: no device interrupt, so only the threads contend (the claims ledger's incident run sets 1000, a 1 kHz device)"
		case "duration_ms":
			// Measured over 2 repeats at 8-16 cores: at 5 ms the 95% CI
			// was up to 12% of qspinlock throughput and 15% of its
			// hand-off; at 100 ms at most 3% of either for every flavour,
			// at about 7 s of wall time for the whole sweep (2 CPUs).
			p.Value = 100
			p.Source = "run length: 100 ms is 19,000-90,000 acquisitions per point; 95% CI within 3% over 2 repeats (measured)"
			p.Low, p.High = 10, 200
		case "same_cluster_ns", "cross_cluster_ns":
			genericDoc(p)
		case "irq_cpu":
			p.Max = 63
		case "cores":
			p.Value, p.Max = 16, 64
			p.Doc = "cores of the generic SoC, one lock-taking thread on each (clusters of 4 Cortex-A72-like cores at the RK3399's A72 OPP and latencies)"
			p.Source = "generic N-core builder"
			p.Prov = platforms.ASSUME
			p.Low, p.High = 1, 16
		}
	}
	ps = append(ps, platforms.Param{Key: "wait", Value: 0, Unit: "code", Prov: platforms.CODE, Source: "arch/arm64/include/asm/barrier.h smp_cond_load_acquire (5.10)",
		Doc: "wait policy: 0 wfe, 1 wfi, 2 relax, 3 adaptive, 4 tiered, 5 wfet", Choices: []float64{0, 1, 2, 3, 4, 5}})
	return ps
}

// genericDoc rewords an RK3399 parameter that a generic part reuses: its
// clusters are alike, so the RK3399's figures stand for any pair of cores
// and its CPUs are numbered cluster by cluster.
func genericDoc(p *platforms.Param) {
	switch p.Key {
	case "same_cluster_ns":
		p.Doc = "cache-line transfer between two cores of one cluster"
	case "cross_cluster_ns":
		p.Doc = "cache-line transfer between cores of two clusters (the RK3399's A53<->A72 figure)"
	case "cpu_a":
		p.Doc = "CPU of the ping thread (numbered cluster by cluster)"
	}
}

// scalingWorkload builds lock-scaling's workload with lock flavour f from
// parameter values v (scalingParams keys), checking each value and that
// they go together.
func scalingWorkload(v map[string]float64, f linux.Flavour) (Workload, error) {
	if err := scalingParams().SetFrom(v, true); err != nil {
		return Workload{}, fmt.Errorf("lock-scaling: %w", err)
	}
	// The generic part takes the RK3399's A72 cluster and its latencies; the
	// A53 parameters (not in scalingParams) take their defaults to build
	// the RK3399 and are dropped with its A53 cluster.
	pv := Defaults()
	maps.Copy(pv, v)
	rk, err := SoC(pv)
	if err != nil {
		return Workload{}, err
	}
	n := int(v["cores"])
	soc, err := generic.NCore(fmt.Sprintf("generic-%d", n), n, 4, rk.Clusters[1], rk)
	if err != nil {
		return Workload{}, err
	}
	return Build(v, soc, f, linux.Mode(int(v["wait"])))
}

func runLockScaling(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	flavour, err := linux.ParseFlavour(spec.Variant)
	if err != nil {
		return platforms.RunResult{}, fmt.Errorf("lock-scaling: %w", err)
	}
	w, err := scalingWorkload(spec.Params, flavour)
	if err != nil {
		return platforms.RunResult{}, err
	}
	w.Trace = spec.NewTrace(0, traceWindow)
	r, err := w.Run(ctx, spec.Seed)
	if err != nil {
		return platforms.RunResult{}, err
	}
	m := withOS(metrics(w, r), w, r)
	m["handoff_ns"] = math.NaN() // no acquisition waited: there was no hand-off to time
	if r.Handoffs.Count() > 0 {
		m["handoff_ns"] = r.Handoffs.Mean().Nanos()
	}
	return platforms.RunResult{Metrics: m, Trace: w.Trace, Events: r.Events, Switches: r.Switches}, nil
}

func spinlockWait() platforms.Experiment {
	return platforms.Experiment{
		Name: "rk3399-spinlock-wait",
		Description: "Article 2 (ARM spinlock wait loop, WFE vs WFI) on the RK3399 model under Linux 5.10: one thread per CPU takes a " +
			"qspinlock with spin_lock_irqsave at the offered load, a Poisson device interrupt on cpu0 takes the same lock in its handler. " +
			"Variant wfe is the real arm64 wait (smp_cond_load_acquire: LDXR arms the exclusive monitor, WFE sleeps until the releasing " +
			"store clears it; no SEV); wfi is the article's faulty loop with WFI, which no release wakes: the waiter sleeps until its next " +
			"interrupt (its scheduler tick, all ticks aligned), and with interrupts masked a pending tick makes every later WFI fall through, " +
			"so it then spins. relax, adaptive and tiered are the article's alternatives (tiered cannot schedule() with interrupts masked, " +
			"so under irqsave=1 it behaves as adaptive; irqsave=0 takes the lock with plain spin_lock, and then it sleeps in schedule() " +
			"after wfe_limit WFE wake-ups, a what-if, since Linux lets no spinlock waiter schedule(), but a handler that takes the lock on the holder's CPU deadlocks: irq_mean_us=0 removes it); " +
			"wfet bounds each WFE sleep by wfet_us (ARMv8.7 WFET, a what-if: the RK3399 lacks it). lose_sev loses SEV " +
			"instructions (the article's faulty SoC), lose_wake every wake-up event. What drives each metric: avg/p99/max_lock_wait_ms are queueing behind the holder (critical " +
			"sections of 10 µs in threads, 5 µs in the handler) plus the wake mechanism (wfe: the WFE wake and about three line transfers " +
			"per hand-off, the release, the reload and the claim; wfi: the waiter's next tick, half a period for a random arrival, most of a period for one queued behind a sleeping waiter; relax: the next poll); " +
			"throughput_ops_s is the closed loop (threads x load / (cs + outside), plus the handler's sections, while waits are short, cut by time lost waiting); " +
			"power_mw and energy_mj come from the energy model (C*V^2*f plus leakage while executing or spinning, leakage only in WFE/WFI, " +
			"none in cpu-sleep) weighted by the time each core spends in each state; stall_pct is lock-wait time over the cores' time; " +
			"contended_pct is slow-path entries per acquisition (arrivals while the lock is held); counter is read back from sim memory " +
			"after each critical section's load/compute/store and equals expected_counter only if mutual exclusion held; wakeups_* and " +
			"ticks count what woke the waiters; cpu_busy_pct is the CPU use the OS shows (waiting is busy, sleeping between operations " +
			"is idle); schedules counts the tiered policy's schedule() calls.",
		Platform: "rk3399",
		Params:   AllParams(),
		Variants: []platforms.Variant{
			{Name: "wfe", Doc: "arm64 qspinlock, waits in LDXR+WFE (smp_cond_load_acquire), no SEV on unlock"},
			{Name: "wfi", Doc: "the article's fault: the same lock waiting in WFI, woken only by interrupts"},
			{Name: "relax", Doc: "busy-wait with cpu_relax (no low-power wait)"},
			{Name: "adaptive", Doc: "poll spin_limit times, then WFE (article 4.2)"},
			{Name: "tiered", Doc: "poll, then WFE wfe_limit times, then schedule() (article 6), a what-if: Linux forbids schedule() in any spinlock (spin_lock disables preemption), and with interrupts masked not even the what-if sleeps, so with irqsave=1 it stays in WFE"},
			{Name: "wfet", Doc: "as wfe, each sleep also ended by a WFET timeout of wfet_us (ARMv8.7; not on the RK3399: a what-if)"},
		},
		Repeats: 3,
		Seed:    4,
		Metrics: runMetrics(),
		Run:     runWait,
		Check:   checkSpinlockWait,
		Traces:  true,
	}
}

func perCPUSplit() platforms.Experiment {
	return platforms.Experiment{
		Name: "per-cpu-split",
		Description: "The article's closing claim (5G baseband: a global lock split into per-CPU locks plus WFE cut the worst-case latency " +
			"from 3.2 ms to 0.4 ms and saved 15% power) on the RK3399 model. The fix was both at once, so the baseline is global-wfi " +
			"(rk3399-spinlock-wait's wfi: one lock, waiting with WFI); global is one lock with WFE (the WFE half of the fix alone); " +
			"percluster gives each cluster (4 x A53, 2 x A72) one lock, the article's per-NUMA-node pools on a big.LITTLE SoC; percpu " +
			"gives each CPU its own lock and counter (the handler takes cpu0's). Worst-case wait falls to the handler-vs-thread " +
			"contention on cpu0's lock only; power changes only through waiting time, since WFE and WFI waiters are clock-gated.",
		Platform: "rk3399",
		Params:   AllParams(),
		Variants: []platforms.Variant{
			{Name: "global", Doc: "one lock shared by all CPUs and the handler, waiting with WFE"},
			{Name: "percpu", Doc: "one lock per CPU (per-CPU data); no cross-CPU contention"},
			{Name: "global-wfi", Doc: "the article's baseline: one lock, waiting with WFI"},
			{Name: "percluster", Doc: "one lock per cluster (4 x A53, 2 x A72), waiting with WFE"},
		},
		Repeats: 3,
		Seed:    5,
		Metrics: runMetrics(),
		Run:     runSplit,
		Check:   checkSpinlockWait,
		Traces:  true,
	}
}

func lockScaling() platforms.Experiment {
	return platforms.Experiment{
		Name: "lock-scaling",
		Description: "Every spinlock flavour across core counts on the generic N-core builder (clusters of four A72-like cores, RK3399 " +
			"line transfers: 100 ns in a cluster, 250 ns across) at high contention: each thread loops lock / 0.5 µs section / unlock / " +
			"1 µs work, waiting with WFE. Transfers of one line queue behind each other (the interconnect carries a line to one requester " +
			"at a time). Ticket lock: all waiters share the line holding the owner field; a release writes it, and every waiter re-reads " +
			"it, so N-1 transfers go out one after another and the next ticket holder sits at a random place in that queue: handoff_ns " +
			"grows about linearly with the waiters (about N/2 transfers), and throughput falls with it. qspinlock: only the pending waiter " +
			"and the MCS queue head watch the lock word; queued waiters spin on their own per-CPU node line and cause no traffic on it " +
			"(TestMCSQueuedWaitersCauseNoLockLineTraffic), so a hand-off is a fixed handful of transfers (the release store taking the " +
			"line back, the head's re-read, its plain store claiming the lock: set_locked) whatever N is: handoff_ns rises from 2 to 8 cores " +
			"as those transfers become cross-cluster and as arriving waiters' atomics take the line, and grows slowly beyond; at 4-8 cores " +
			"the ticket lock, whose hand-off needs no further write, is still faster. TAS/TTAS storm the line with atomics: every attempt " +
			"first prefetches the line for writing (prfm pstl1strm, as Linux's LL/SC atomics do), so even an attempt that fails takes it " +
			"exclusively; TTAS's waiters all try at each release and then re-read, and its attempt after a test read upgrades a line it " +
			"shares, so it is the slowest at every contended count, TAS next from 4 cores. That upgrade is an assumption " +
			"(a72_prfm_upgrade=1: an A72's prefetch for store takes a line it shares owned; the A53's manual says its own does nothing): " +
			"with a72_prfm_upgrade=0 only the winner's store-exclusive takes the line, and TTAS leads TAS from 4 to about 12 cores. " +
			"throughput_ops_s is acquisitions per second over the run; handoff_ns is the time from a release (unlock call) to the next " +
			"holder's acquisition when that holder was already waiting; contended_pct counts acquisitions that entered the slow path; " +
			"power_mw follows from the core states (TAS/TTAS execute atomics, WFE waiters are clock-gated).",
		Platform: "generic",
		Params:   scalingParams(),
		Variants: []platforms.Variant{
			{Name: string(linux.QSpinlock), Doc: "arm64 qspinlock (pending bit + MCS queue)"},
			{Name: string(linux.Ticket), Doc: "arm32 ticket lock (all waiters watch one line)"},
			{Name: string(linux.TAS), Doc: "test-and-set: retry the atomic swap"},
			{Name: string(linux.TTAS), Doc: "test-and-test-and-set: read until free, then swap"},
		},
		Sweep:   []platforms.Axis{{Param: "cores", Values: []float64{1, 2, 4, 8, 12, 16}}},
		Repeats: 2,
		Seed:    6,
		Metrics: append([]platforms.Metric{{Name: "handoff_ns", Unit: "ns", Better: platforms.Lower, Doc: "release to next acquisition, when waiters were queued", None: "no acquisition waited (one core)"}}, runMetrics()...),
		Run:     runLockScaling,
		Check:   func(v map[string]float64) error { _, err := scalingWorkload(v, linux.QSpinlock); return err },
		Traces:  true,
	}
}

// loseWake is the fault of a lossy event line, shared by the experiments
// that can lose wake-ups.
func loseWake() platforms.Param {
	return platforms.Param{Key: "lose_wake", Value: 0, Unit: "prob", Prov: platforms.ASSUME, Source: "not in the article (its fault is a lost SEV: lose_sev); a faulty event line, rate not given",
		Doc: "probability that each wake-up event, an exclusive-monitor clear or an SEV, is lost on its way to a core (sim.Faults.LoseWake)", Min: 0, Max: 1, Low: 0, High: 0.5}
}

// WorkloadParams returns the workload parameters of the spinlock
// experiments. The article gives none of the lengths (only "70% load" and
// "mixed interrupt/process-context contention"), so they are ASSUME with
// wide plausible ranges; none is tuned to the article's numbers.
func WorkloadParams() platforms.Params {
	return platforms.Params{
		{Key: "load", Value: 0.7, Unit: "", Prov: platforms.ASSUME, Low: 0.5, High: 0.9,
			Source: "not given for the RK3399 test; 70% is the load of the article's incident on a 4 x Cortex-A72 system (" + ArticleARM + ", section 1: 负载达到70%)",
			Doc:    "share of time each thread is busy (work + critical section) when it never waits; it sleeps the rest", Min: 0.01, Max: 1},
		{Key: "cs_us", Value: 10, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "process-context critical section", Min: 0, Max: 10000, Low: 1, High: 100},
		{Key: "outside_us", Value: 90, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "mean (exponential) work between critical sections", Min: 0, Max: 100000, Low: 10, High: 1000},
		{Key: "irq_mean_us", Value: 1000, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article; a 1 kHz device",
			Doc: "mean gap of the Poisson device interrupt whose handler takes the lock (0: none)", Min: 0, Max: 1e6, Low: 100, High: 10000},
		{Key: "irq_cs_us", Value: 5, Unit: "us", Prov: platforms.ASSUME, Source: "not in the article",
			Doc: "critical section in the interrupt handler", Min: 0, Max: 1000, Low: 1, High: 50},
		{Key: "irq_cpu", Value: 0, Unit: "cpu", Prov: platforms.CODE, Source: "drivers/irqchip/irq-gic-v3.c gic_set_affinity (v5.10): an SPI goes to the first online CPU of its affinity mask (cpumask_any_and), cpu0 without irqbalance",
			Doc: "CPU the device interrupt is routed to", Integer: true, Min: 0, Max: 5},
		{Key: "cores", Value: 6, Unit: "cores", Prov: platforms.ASSUME, Low: 2, High: 6,
			Source: "the test ran on an RK3399 (2 x A72 + 4 x A53: " + ArticleARM + ", section 3), which does not say how many CPUs contended; all six assumed",
			Doc:    "CPUs running a contending thread (cpu0..n-1: A53s first, as Linux numbers them)", Integer: true, Min: 1, Max: 6},
		{Key: "duration_ms", Value: 1000, Unit: "ms", Prov: platforms.ASSUME, Source: "run length; long enough for ~250 ticks at HZ=250",
			Doc: "simulated time threads keep starting operations", Min: 1, Max: 60000, Low: 500, High: 5000},
		// lock indexes linux.Flavours.
		{Key: "lock", Value: 0, Unit: "code", Prov: platforms.CODE, Source: "arch/arm64/Kconfig ARCH_USE_QUEUED_SPINLOCKS (5.10)",
			Doc: "lock algorithm: 0 qspinlock (arm64 5.10), 1 ticket (arm32: plain WFE, SEV on unlock), 2 test-and-set, 3 test-and-test-and-set, 4 ticket as arm64 had it before v4.19 (LDAXRH + WFE, no SEV)", Choices: []float64{0, 1, 2, 3, 4}},
		{Key: "relax_cycles", Value: 20, Unit: "cycles", Prov: platforms.ASSUME, Source: "no source; ldr + cmp + b + yield",
			Doc: "one poll iteration of a busy-wait (cpu_relax)", Integer: true, Min: 1, Max: 10000, Low: 5, High: 100},
		{Key: "spin_limit", Value: 100, Unit: "polls", Prov: platforms.ASSUME, Source: "article 4.2/6 SPIN_THRESHOLD, value not given",
			Doc: "adaptive and tiered: polls before WFE", Integer: true, Min: 0, Max: 1e6, Low: 10, High: 1000},
		{Key: "wfe_limit", Value: 10, Unit: "wakeups", Prov: platforms.ASSUME, Source: "article 6 SLEEP_THRESHOLD, value not given",
			Doc: "tiered: WFE wake-ups before schedule()", Integer: true, Min: 0, Max: 1e6, Low: 2, High: 100},
		loseWake(),
		{Key: "lose_sev", Value: 0, Unit: "prob", Prov: platforms.ASSUME, Source: ArticleARM + ", section 5: a SoC whose SEV instruction lost wake-ups now and then (rate not given)",
			Doc: "probability that an SEV instruction's event is lost (monitor clears are not: the arm64 locks, which send no SEV, do not notice)", Min: 0, Max: 1, Low: 0, High: 0.5},
		{Key: "redundant_sev", Value: 0, Unit: "bool", Prov: platforms.CODE, Source: ArticleARM + ", section 5: the workaround, a redundant SEV",
			Doc: "1: every release sends an extra SEV", Choices: []float64{0, 1}},
		{Key: "irqsave", Value: 1, Unit: "bool", Prov: platforms.CODE, Source: ArticleARM + ", section 4.1: spin_lock_irqsave() is required in interrupt context",
			Doc: "1: threads take the lock with spin_lock_irqsave; 0: with plain spin_lock, interrupts enabled while waiting and holding (the tiered policy may then schedule(), a what-if: no Linux spinlock may; a handler taking the same lock on the holder's CPU deadlocks)", Choices: []float64{0, 1}},
		{Key: "wfet_us", Value: 50, Unit: "us", Prov: platforms.ASSUME, Source: "no kernel bounds spinlock waits with WFET (ARMv8.7 FEAT_WFxT, which the RK3399's ARMv8.0 cores lack); " + ArticleARM + ", section 4.3 names it without a value",
			Doc: "wfet: the timeout that ends each WFET sleep", Min: 0.1, Max: 100000, Low: 10, High: 1000},
	}
}

// ArticleARM cites the ARM article (the lab holds its text; site and date
// are not recorded with it).
const ArticleARM = "\"ARM多核开发避坑指南：spinlock里用WFE还是WFI？一个真实性能调优案例\" (ARM multi-core pitfalls: WFE or WFI in a spinlock?)"

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
		LoseSEV: v["lose_sev"], NoIRQSave: v["irqsave"] == 0,
	}
	w.Wait.Timeout = us("wfet_us")
	return w, w.Validate()
}
