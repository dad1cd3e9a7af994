// Package rk3399 is the Rockchip RK3399 model: 4 x Cortex-A53 (cpu0-3,
// cluster 0) + 2 x Cortex-A72 (cpu4-5, cluster 1) running Linux 5.10 arm64.
// Every number is a platforms.Param carrying its provenance and source; SoC
// turns a set of values into a
// generic.SoC that a user can copy and change, and Kernel into the Linux
// timekeeping configuration of platforms/linux.
package rk3399

import (
	"fmt"

	"synclab/platforms"
	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// Source strings shared by several parameters.
const (
	srcOPP    = "arch/arm64/boot/dts/rockchip/rk3399-opp.dtsi (v5.10), cluster0_opp / cluster1_opp"
	srcDTSI   = "arch/arm64/boot/dts/rockchip/rk3399.dtsi (v5.10)"
	srcC2C    = "nviennot/core-to-core-latency CAS ping-pong results, GitHub issues #44 (Raspberry Pi 4, A72: 89-90 ns) and #36 (LX2160A, A72: 60-67 ns in a cluster, 240-273 ns across clusters)"
	srcHZ     = "kernel/Kconfig.hz, arch/arm64/configs/defconfig (v5.10): HZ_250, NO_HZ_IDLE"
	srcEvtStr = "include/clocksource/arm_arch_timer.h ARCH_TIMER_EVT_STREAM_PERIOD_US=100; drivers/clocksource/arm_arch_timer.c arch_timer_configure_evtstream rounds it to a power of two of ticks of the 24 MHz counter (TF-A plat/rockchip/rk3399/rk3399_def.h SYS_COUNTER_FREQ_IN_TICKS): 2048 ticks with commit 8b7770b877d1 (clocksource/drivers/arm_arch_timer: Correct fault programming of CNTKCTL_EL1.EVNTI; v5.11, a fix backported to the stable kernels: 4.9.249 and 4.19.164 carry it); the v5.10 tag without it programs the next bit, 4096 ticks"
)

// A53OPPs and A72OPPs are the RK3399 operating points (MHz, mV).
var (
	A53OPPs = []generic.OPP{{MHz: 408, MilliVolt: 800}, {MHz: 600, MilliVolt: 800}, {MHz: 816, MilliVolt: 850}, {MHz: 1008, MilliVolt: 925}, {MHz: 1200, MilliVolt: 1000}, {MHz: 1416, MilliVolt: 1125}}
	A72OPPs = []generic.OPP{{MHz: 408, MilliVolt: 800}, {MHz: 600, MilliVolt: 800}, {MHz: 816, MilliVolt: 825}, {MHz: 1008, MilliVolt: 875}, {MHz: 1200, MilliVolt: 950}, {MHz: 1416, MilliVolt: 1025}, {MHz: 1608, MilliVolt: 1100}, {MHz: 1800, MilliVolt: 1200}}
)

func mhzChoices(opps []generic.OPP) []float64 {
	c := make([]float64, len(opps))
	for i, o := range opps {
		c[i] = float64(o.MHz)
	}
	return c
}

// EventStreamPeriod is the architected timer's event-stream period on the
// RK3399: the kernel asks for 100 us and arch_timer_configure_evtstream picks the
// counter bit whose toggle period is the nearest power of two of ticks of the
// 24 MHz system counter: 2048 ticks = 85.33 us (DERIVED), with the EVNTI
// fix that stable v5.10.y kernels carry (srcEvtStr; without it, 170.7 us).
const EventStreamPeriod = sim.Time(2048) * sim.Second / 24_000_000

// Params returns the RK3399 platform parameters with their defaults.
func Params() platforms.Params {
	return platforms.Params{
		{Key: "a53_mhz", Value: 1416, Unit: "MHz", Prov: platforms.CODE, Source: srcOPP,
			Doc: "Cortex-A53 cluster frequency (its OPP sets the voltage)", Choices: mhzChoices(A53OPPs)},
		{Key: "a72_mhz", Value: 1800, Unit: "MHz", Prov: platforms.CODE, Source: srcOPP,
			Doc: "Cortex-A72 cluster frequency (its OPP sets the voltage)", Choices: mhzChoices(A72OPPs)},
		{Key: "a53_dyn_coeff", Value: 100, Unit: "uW/MHz/V^2", Prov: platforms.CODE, Source: srcDTSI + " cpu_l0..3 dynamic-power-coefficient",
			Doc: "energy-model coefficient C of P = C*V^2*f for an A53", Min: 0, Max: 1000},
		{Key: "a72_dyn_coeff", Value: 436, Unit: "uW/MHz/V^2", Prov: platforms.CODE, Source: srcDTSI + " cpu_b0..1 dynamic-power-coefficient",
			Doc: "energy-model coefficient C of P = C*V^2*f for an A72", Min: 0, Max: 2000},
		{Key: "a53_static_mw", Value: 15, Unit: "mW", Prov: platforms.ASSUME, Source: "no public RK3399 leakage figure; ~8% of the A53's 179 mW dynamic power",
			Doc: "leakage of a powered A53, drawn also in WFE/WFI (clock-gated); cut in CPU_SLEEP", Min: 0, Max: 200, Low: 5, High: 40},
		{Key: "a72_static_mw", Value: 80, Unit: "mW", Prov: platforms.ASSUME, Source: "no public RK3399 leakage figure; ~7% of the A72's 1130 mW dynamic power",
			Doc: "leakage of a powered A72, drawn also in WFE/WFI (clock-gated); cut in CPU_SLEEP", Min: 0, Max: 500, Low: 20, High: 200},
		{Key: "spin_share", Value: 0.8, Unit: "", Prov: platforms.ASSUME, Source: "no source; a ldr/yield loop toggles fewer gates than general code",
			Doc: "dynamic power of a busy-wait loop as a share of executing power", Min: 0, Max: 1, Low: 0.5, High: 1},
		{Key: "same_cluster_ns", Value: 100, Unit: "ns", Prov: platforms.ASSUME, Source: srcC2C + "; one in-cluster figure for both clusters, 100 ns: above the A72 proxies' 60-90 ns, since an A53 pair is assumed slower",
			Doc: "cache-line transfer between two cores of one cluster", Min: 1, Max: 1000, Low: 60, High: 120},
		{Key: "cross_cluster_ns", Value: 250, Unit: "ns", Prov: platforms.ASSUME, Source: srcC2C + "; A72<->A53 over CCI-500",
			Doc: "cache-line transfer between the A53 and A72 clusters (CCI-500)", Min: 1, Max: 2000, Low: 200, High: 300},
		{Key: "dram_ns", Value: 120, Unit: "ns", Prov: platforms.ASSUME, Source: "no source; typical LPDDR3/4 load-to-use latency on A53/A72 SoCs",
			Doc: "line fill from DRAM (first touch of a line)", Min: 1, Max: 1000, Low: 80, High: 200},
		{Key: "hit_cycles", Value: 4, Unit: "cycles", Prov: platforms.ASSUME, Source: "Cortex-A72 Software Optimization Guide (Arm UAN 0016A): integer loads, 4 cycles; no A53 figure published (3-6 assumed)",
			Doc: "access that hits in the core's L1", Integer: true, Min: 1, Max: 50, Low: 3, High: 6},
		{Key: "wake_cycles", Value: 30, Unit: "cycles", Prov: platforms.ASSUME, Source: "no source; WFE wake ~ the line transfer + 30 cycles, WFI exit <= 1 µs",
			Doc: "cycles from a wake-up event to the next instruction after WFE/WFI", Integer: true, Min: 0, Max: 2000, Low: 10, High: 1000},
		{Key: "irq_entry_cycles", Value: 300, Unit: "cycles", Prov: platforms.ASSUME, Source: "no source; GICv3 acknowledge + el1_irq vector + handle_domain_irq",
			Doc: "cycles from interrupt assertion to the handler", Integer: true, Min: 0, Max: 10000, Low: 100, High: 1000},
		{Key: "irq_exit_cycles", Value: 200, Unit: "cycles", Prov: platforms.ASSUME, Source: "no source; EOI + irq_exit + eret",
			Doc: "cycles from handler end back to the interrupted code", Integer: true, Min: 0, Max: 10000, Low: 100, High: 1000},
		{Key: "tick_us", Value: 5, Unit: "us", Prov: platforms.ASSUME, Source: "no source; tick_sched_timer -> update_process_times/scheduler_tick",
			Doc: "work of one scheduler tick handler", Min: 0, Max: 100, Low: 2, High: 20},
		{Key: "ctx_switch_us", Value: 3, Unit: "us", Prov: platforms.ASSUME, Source: "no source; lmbench lat_ctx on A53/A72-class cores is a few µs",
			Doc: "one context switch (schedule() out or in), paid by the tiered policy's last tier", Min: 0, Max: 100, Low: 1, High: 10},
		{Key: "ipi_ns", Value: 1000, Unit: "ns", Prov: platforms.ASSUME, Source: "no source; GIC-500 SGI delivery",
			Doc: "reschedule IPI from sender to target", Min: 0, Max: 100000, Low: 300, High: 3000},
		{Key: "hz", Value: 250, Unit: "Hz", Prov: platforms.CODE, Source: srcHZ,
			Doc: "scheduler tick rate CONFIG_HZ: a WFI waiter sleeps until its next tick", Choices: []float64{100, 250, 300, 1000}},
		{Key: "nohz_idle", Value: 1, Unit: "bool", Prov: platforms.CODE, Source: srcHZ + " (CONFIG_NO_HZ_IDLE=y)",
			Doc: "1: the tick stops while a CPU is idle (it keeps running while a CPU waits for a lock)", Choices: []float64{0, 1}},
		{Key: "event_stream", Value: 1, Unit: "bool", Prov: platforms.CODE, Source: srcEvtStr + "; on unless the kernel is built without CONFIG_ARM_ARCH_TIMER_EVTSTREAM",
			Doc: "1: the architected timer wakes every WFE each 85.3 µs", Choices: []float64{0, 1}},
		{Key: "monitor_loss", Value: 0, Unit: "bool", Prov: platforms.ASSUME, Source: "Arm Architecture Reference Manual for A-profile (DDI 0487K.a), D1.6.1: clearing a PE's global monitor sets its event register; a store by another observer clears it, and the architecture lets an implementation clear it for other reasons too (IMPLEMENTATION DEFINED); the Cortex-A53 and A72 TRMs do not say whether losing the line to another core's prefetch for store or failed atomic does; 0, the least the architecture guarantees, assumed (rk3399-monitor-probe: bench/board's probe decides it on a board)",
			Doc: "1: a core's exclusive monitor goes with its copy of the line, so another core taking the line for writing (PRFM PSTL1STRM, a failed CAS) clears it and wakes a WFE waiter, as a store does; 0: only a store does", Choices: []float64{0, 1}, Low: 0, High: 1},
		{Key: "a72_prfm_upgrade", Value: 1, Unit: "bool", Prov: platforms.ASSUME, Source: "Cortex-A53 TRM (DDI 0500D), 6.6.1: PLD and PRFM look the line up and start a linefill only on a miss, PST then asking for the line exclusive, so an A53's prefetch for store that finds the line shared does nothing (the model's A53s do nothing); the Cortex-A72 TRM (100095) does not say, while the Cortex-A35's and A76's word it as the A53's does (lookup, linefill on a miss), which leans to 0; 1 assumed, what the model did before this parameter, and what the hint is for (the line made ready for writing before Linux's LL/SC pair: arch/arm64/include/asm/atomic_ll_sc.h); rk3399-prfm-probe: bench/board's probe decides it on a board",
			Doc: "1: an A72's PRFM PSTL1STRM that finds the line shared takes it owned, as a miss does, so the LL/SC pair after it hits; 0: it does nothing, as an A53's, and the store-exclusive takes the line", Choices: []float64{0, 1}, Low: 0, High: 1},
	}
}

// SoC returns the RK3399 as a generic.SoC built from parameter values v
// (every key of Params). Each value is checked against its parameter, so bad
// input is an error naming the key and the value.
func SoC(v map[string]float64) (generic.SoC, error) {
	if err := Params().SetFrom(v, true); err != nil {
		return generic.SoC{}, fmt.Errorf("rk3399: %w", err)
	}
	cyc := func(k string) int64 { return int64(v[k]) }
	cluster := func(name, core string, n int, opps []generic.OPP, mhz, coeff, static float64) generic.Cluster {
		return generic.Cluster{Name: name, Core: core, Cores: n, OPPs: append([]generic.OPP(nil), opps...), MHz: int64(mhz),
			DynCoeff: coeff, StaticMW: static, SpinShare: v["spin_share"],
			IRQEntry: cyc("irq_entry_cycles"), IRQExit: cyc("irq_exit_cycles"), WakeCycles: cyc("wake_cycles"), HitCycles: cyc("hit_cycles")}
	}
	s := generic.SoC{
		Name: "RK3399",
		Clusters: []generic.Cluster{
			cluster("little", "Cortex-A53", 4, A53OPPs, v["a53_mhz"], v["a53_dyn_coeff"], v["a53_static_mw"]),
			cluster("big", "Cortex-A72", 2, A72OPPs, v["a72_mhz"], v["a72_dyn_coeff"], v["a72_static_mw"]),
		},
		LineSize:     64, // Cortex-A53/A72 L1D and L2 line (TRMs)
		SameCluster:  sim.Time(v["same_cluster_ns"] * float64(sim.Nanosecond)),
		OtherCluster: sim.Time(v["cross_cluster_ns"] * float64(sim.Nanosecond)),
		DRAM:         sim.Time(v["dram_ns"] * float64(sim.Nanosecond)),
		// rk3399.dtsi idle-states (CODE): CPU_SLEEP powers the core down
		// (leakage cut: 0 mW per core) and stops the local timer.
		// CLUSTER_SLEEP (400/500/2000 us) needs every core of a cluster
		// idle at once; the per-core model leaves it out.
		Idle: []sim.IdleState{{Name: "cpu-sleep", Entry: 120 * sim.Microsecond, Exit: 250 * sim.Microsecond,
			MinResidency: 900 * sim.Microsecond, PowerMW: 0, StopsTimer: true}},
	}
	if v["event_stream"] != 0 {
		s.EventStream = EventStreamPeriod
	}
	s.MonitorLoss = v["monitor_loss"] != 0
	s.Clusters[1].PrefetchUpgrade = v["a72_prfm_upgrade"] != 0 // the A53s' is a TRM fact: none
	return s, s.Validate()
}

// Kernel returns the Linux 5.10 timekeeping configuration from parameter
// values v (keys hz, nohz_idle, tick_us, ctx_switch_us, ipi_ns).
func Kernel(v map[string]float64) linux.Config {
	us := func(k string) sim.Time { return sim.Time(v[k] * float64(sim.Microsecond)) }
	return linux.Config{HZ: int(v["hz"]), NoHZIdle: v["nohz_idle"] != 0, TickWork: us("tick_us"),
		SwitchWork: us("ctx_switch_us"), IPILatency: us("ipi_ns") / 1000}
}

// Defaults returns the default value of every parameter, the platform's and
// the workload's (AllParams): what SoC, Kernel and SpinlockWait read.
func Defaults() map[string]float64 { return AllParams().Values() }
