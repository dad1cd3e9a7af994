package esp32

import (
	"context"

	"synclab/platforms"
)

// Experiments returns the ESP32 experiments: the article's critical-section
// benchmark, priority inversion, the unblock latency FreeRTOS documents, the
// notification API's uncontended paths and timeout, ESP-IDF's own
// performance tests and the core-to-core ping-pong.
func Experiments() []platforms.Experiment {
	return []platforms.Experiment{criticalSection(), priorityInversion(), notifyUnblock(), apiPaths(), idfPerf(), pingPong()}
}

func criticalSection() platforms.Experiment {
	params := append(append(Params(), WorkloadParams()...), TraceParams()...)
	return platforms.Experiment{
		Name: "esp32-critical-section",
		Description: "ESP32, ESP-IDF v5 FreeRTOS SMP: two tasks (parameter tasks; task i pinned to core i mod 2, priority 10) each do " +
			"1,000,000 guarded increments (parameter iterations) of one counter, guarded by a mutex, a task-notification handshake, " +
			"a portMUX critical section, a binary semaphore or a handshake through queues; total time, CPU use, interrupt latency.",
		Platform: "esp32",
		Params:   params,
		Variants: []platforms.Variant{
			{Name: VariantMutex, Doc: "xSemaphoreCreateMutex; xSemaphoreTake(portMAX_DELAY), counter++, xSemaphoreGive (the article's \"semaphore\")"},
			{Name: VariantNotify, Doc: "ulTaskNotifyTake(pdTRUE, portMAX_DELAY), counter++, xTaskNotifyGive(other): the article's strict-alternation handshake"},
			{Name: VariantCritical, Doc: "portENTER_CRITICAL(&mux), counter++, portEXIT_CRITICAL(&mux): a spinlock with interrupts masked to level 3"},
			{Name: VariantBinary, Doc: "xSemaphoreCreateBinary given once; take/give like the mutex but without priority inheritance"},
			{Name: VariantQueue, Doc: "xQueueReceive(own queue, portMAX_DELAY), counter++, xQueueSend(next task's queue): the notify handshake with a queue of one 4-byte item per task as its mailbox"},
		},
		Repeats: 1,
		Seed:    1,
		Metrics: csMetrics,
		Run:     runCriticalSection,
		Traces:  true,
		Check:   CheckCriticalSection,
	}
}

func priorityInversion() platforms.Experiment {
	return platforms.Experiment{
		Name: "esp32-priority-inversion",
		Description: "ESP32 core 0: low (3) holds a resource, high (8) wants it, medium (5) computes; " +
			"how long high waits with a mutex (inheritance), a binary semaphore or a notification handshake.",
		Platform: "esp32",
		Params: append(Params(),
			platforms.Param{Key: "hold_us", Value: 15000, Unit: "us", Prov: platforms.CODE, Min: 1, Max: 1e6,
				Source: "scenario (textbook priority inversion)", Doc: "time the low task holds the resource"},
			platforms.Param{Key: "medium_us", Value: 20000, Unit: "us", Prov: platforms.CODE, Min: 0, Max: 1e6,
				Source: "scenario", Doc: "work of the medium task, which wakes with high"}),
		Variants: []platforms.Variant{
			{Name: GuardMutex, Doc: "mutex: the holder inherits the waiter's priority"},
			{Name: GuardBinary, Doc: "binary semaphore: no inheritance"},
			{Name: GuardNotify, Doc: "notification handshake: no inheritance (the article's caveat)"},
		},
		Repeats: 1, Seed: 1,
		Metrics: []platforms.Metric{
			{Name: "high_blocked_us", Unit: "us", Better: platforms.Lower, Doc: "time the high-priority task waited for the resource"},
			{Name: "holder_peak_priority", Unit: "priority", Better: platforms.Neither, Doc: "highest priority the low task ran at while holding"},
		},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			mhz := spec.Params[KeyCPUMHz]
			r, err := RunPriorityInversion(ctx, spec.Variant, spec.Params,
				int64(spec.Params["hold_us"]*mhz), int64(spec.Params["medium_us"]*mhz), RunOptions{Trace: spec.Trace})
			if err != nil {
				return platforms.RunResult{}, err
			}
			return platforms.RunResult{Metrics: map[string]float64{"high_blocked_us": r.HighBlockedUS, "holder_peak_priority": float64(r.HolderPeakPriority)},
				Trace: r.Trace}, nil
		},
		Traces: true,
	}
}

func notifyUnblock() platforms.Experiment {
	return platforms.Experiment{
		Name: "esp32-notify-unblock",
		Description: "ESP32 single core: time from a give to the woken higher-priority task running, through a task " +
			"notification, a binary semaphore or a one-item queue (FreeRTOS documents notifications as ~45% faster than a " +
			"binary semaphore, 35% since V8.2.0).",
		Platform: "esp32",
		Params: append(Params(),
			platforms.Param{Key: "rounds", Value: 1000, Unit: "rounds", Prov: platforms.CODE, Integer: true, Min: 1, Max: 1e6,
				Source: "scenario", Doc: "give/unblock rounds averaged"}),
		Variants: []platforms.Variant{
			{Name: GuardNotify, Doc: "xTaskNotifyGive / ulTaskNotifyTake"},
			{Name: GuardBinary, Doc: "xSemaphoreGive / xSemaphoreTake on a binary semaphore"},
			{Name: GuardQueue, Doc: "xQueueSend / xQueueReceive of a 4-byte item on a queue of one"},
		},
		Repeats: 1, Seed: 1,
		Metrics: []platforms.Metric{{Name: "unblock_us", Unit: "us", Better: platforms.Lower, Doc: "mean time from the give call to the woken task running"}},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			r, err := RunNotifyUnblock(ctx, spec.Variant, spec.Params, int(spec.Params["rounds"]), RunOptions{Trace: spec.Trace})
			if err != nil {
				return platforms.RunResult{}, err
			}
			return platforms.RunResult{Metrics: map[string]float64{"unblock_us": r.US}, Trace: r.Trace}, nil
		},
		Traces: true,
	}
}

func apiPaths() platforms.Experiment {
	return platforms.Experiment{
		Name: "esp32-api-paths",
		Description: "ESP32 core 0, one task: a give followed by a take that finds it (uncontended: neither blocks), " +
			"the portMUX spinlocks they take and what those cost, then a take with a timeout that nobody gives; " +
			"a task notification (xTaskNotifyGive to itself, ulTaskNotifyTake) against a binary semaphore.",
		Platform: "esp32",
		Params: append(Params(),
			platforms.Param{Key: "rounds", Value: 1000, Unit: "rounds", Prov: platforms.CODE, Integer: true, Min: 1, Max: 1e6,
				Source: "scenario", Doc: "give/take pairs averaged"},
			platforms.Param{Key: "timeout_ticks", Value: 10, Unit: "ticks", Prov: platforms.CODE, Integer: true, Min: 1, Max: 1000,
				Source: "scenario: ulTaskNotifyTake(xClearCountOnExit, xTicksToWait) and xSemaphoreTake(xSemaphore, xBlockTime) (esp-idf v5.1 components/freertos/FreeRTOS-Kernel/include/freertos/task.h, semphr.h)",
				Doc:    "xTicksToWait of the take nobody gives"}),
		Variants: []platforms.Variant{
			{Name: GuardNotify, Doc: "xTaskNotifyGive(self), ulTaskNotifyTake(pdTRUE, 0); then ulTaskNotifyTake(pdTRUE, timeout_ticks)"},
			{Name: GuardBinary, Doc: "xSemaphoreGive, xSemaphoreTake(0) on a binary semaphore; then xSemaphoreTake(timeout_ticks)"},
		},
		Repeats: 1, Seed: 1,
		Metrics: []platforms.Metric{
			{Name: "give_take_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "one give plus one take that finds it, uncontended"},
			{Name: "lock_sections", Unit: "count", Better: platforms.Lower, Doc: "portMUX spinlocks one give plus take acquires (xKernelLock, xQueueLock), each with one S32C1I"},
			{Name: "spinlock_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "lock_sections x one uncontended portMUX enter+exit (the spinlock and its critical-section bookkeeping), measured in the same run"},
			{Name: "s32c1i_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "lock_sections x one S32C1I on a free internal-SRAM word, measured: the atomic instructions' own share"},
			{Name: "timeout_returned", Unit: "value", Better: platforms.Neither, Doc: "what the take nobody gives returned: the notification count, or pdTRUE (1) / pdFALSE (0); 0 means it timed out"},
			{Name: "timeout_ticks_waited", Unit: "ticks", Better: platforms.Neither, Doc: "ticks from that take's call to its return"},
		},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			r, err := RunAPIPaths(ctx, spec.Variant, spec.Params, int(spec.Params["rounds"]), uint32(spec.Params["timeout_ticks"]))
			if err != nil {
				return platforms.RunResult{}, err
			}
			return platforms.RunResult{Metrics: map[string]float64{
				"give_take_cycles": r.GiveTakeCycles, "lock_sections": r.LockSections,
				"spinlock_cycles": r.LockSections * r.PairCycles, "s32c1i_cycles": r.LockSections * r.S32C1ICycles,
				"timeout_returned": r.TimeoutReturned, "timeout_ticks_waited": r.TimeoutTicksWaited,
			}}, nil
		},
	}
}

var csMetrics = []platforms.Metric{
	{Name: "total_ms", Unit: "ms", Better: platforms.Lower, Doc: "esp_timer time from the scheduler start until the last worker finishes"},
	{Name: "ns_per_op", Unit: "ns", Better: platforms.Lower, Doc: "total time divided by one task's iterations (the article's \"mean latency per operation\")"},
	{Name: "cpu_core0_pct", Unit: "%", Better: platforms.Neither, Doc: "core 0: 100% minus the idle task's run-time share (vTaskGetRunTimeStats)"},
	{Name: "cpu_core1_pct", Unit: "%", Better: platforms.Neither, Doc: "core 1: 100% minus the idle task's run-time share"},
	{Name: "max_irq_latency_us", Unit: "us", Better: platforms.Lower, Doc: "largest latency of the 1 kHz peripheral interrupt on core 0 (assertion to handler)"},
	{Name: "p99_irq_latency_us", Unit: "us", Better: platforms.Lower, Doc: "99th percentile of that latency"},
	{Name: "context_switches", Unit: "count", Better: platforms.Lower, Doc: "task switches on both cores"},
	{Name: "ipis", Unit: "count", Better: platforms.Lower, Doc: "crosscore interrupts sent (yields to the other core and self-yields)"},
	{Name: "handoffs", Unit: "count", Better: platforms.Neither, Doc: "increments made by another task than the one before: how often the guard passed between tasks (the handshake: every increment)"},
	{Name: "sync_ram_bytes", Unit: "bytes", Better: platforms.Lower, Doc: "RAM of the synchronization object as allocated: StaticQueue_t laid out from FreeRTOS.h with IDF's configuration (StaticQueueBytes), portMUX_TYPE 8 B, notification 0 B (its 5 B per index are in every TCB anyway)"},
	{Name: "counter", Unit: "count", Better: platforms.Neither, Doc: "final value of the shared counter"},
	{Name: "expected_counter", Unit: "count", Better: platforms.Neither, Doc: "tasks x iterations: what the counter must read if mutual exclusion held"},
	{Name: "kernel_lock_spin_us", Unit: "us", Better: platforms.Lower, Doc: "time cores spent spinning on xKernelLock"},
	{Name: "object_lock_spin_us", Unit: "us", Better: platforms.Lower, Doc: "time cores spent spinning on the object's own spinlock (xQueueLock or the portMUX)"},
	{Name: "worst_irq_critical_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst peripheral-interrupt latency: time core 0 spent in tasks' taskENTER_CRITICAL sections (interrupts masked)"},
	{Name: "worst_irq_crosscore_isr_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst latency: time in the crosscore (yield) ISR before any context switch"},
	{Name: "worst_irq_tick_isr_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst latency: time in the tick ISR before any context switch"},
	{Name: "worst_irq_switch_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst latency: context switch from an ISR (save, restore, handler tail and exit)"},
	{Name: "worst_irq_in_flight_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst latency: a memory access of unmasked code in flight at the assertion (an SRAM or PSRAM stall is not interruptible)"},
	{Name: "worst_irq_entry_us", Unit: "us", Better: platforms.Lower, Doc: "of the worst latency: the interrupt's own entry (irq_entry_cycles) and any unmasked wait"},
	{Name: "energy_mj", Unit: "mJ", Better: platforms.Lower, Doc: "energy of both cores (datasheet modem-sleep currents split per core; comparative only)"},
}

func runCriticalSection(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	r, err := RunCriticalSection(ctx, spec.Variant, spec.Params, spec.Seed, RunOptions{Trace: spec.Trace, Detailed: spec.Detailed})
	if err != nil {
		return platforms.RunResult{}, err
	}
	return csRunResult(r), nil
}

// csRunResult turns a critical-section run into the experiment's metrics and
// samples: each interrupt's latency split by cause (irq_blame_<cause>_us,
// aligned with irq_latency_us), and the split of the worst one as metrics.
func csRunResult(r CSResult) platforms.RunResult {
	samples := map[string][]float64{"irq_latency_us": r.IRQLatencyUS}
	worst := -1
	for i, l := range r.IRQLatencyUS {
		if worst < 0 || l > r.IRQLatencyUS[worst] {
			worst = i
		}
	}
	metrics := map[string]float64{
		"total_ms": r.TotalMS, "ns_per_op": r.NSPerOp,
		"cpu_core0_pct": r.CPUPct[0], "cpu_core1_pct": r.CPUPct[1],
		"max_irq_latency_us": r.MaxIRQUS, "p99_irq_latency_us": r.P99IRQUS,
		"context_switches": float64(r.ContextSwitches), "ipis": float64(r.IPIs), "handoffs": float64(r.Handoffs),
		"sync_ram_bytes": float64(r.SyncRAMBytes),
		"counter":        float64(r.Counter), "expected_counter": float64(r.Expected),
		"kernel_lock_spin_us": r.KernelLockSpinUS, "object_lock_spin_us": r.ObjectLockSpinUS,
		"energy_mj": r.EnergyMJ,
	}
	for _, c := range BlameCauses {
		samples["irq_blame_"+c.String()+"_us"] = r.IRQBlameUS[c]
		metrics["worst_irq_"+c.String()+"_us"] = 0
		if worst >= 0 {
			metrics["worst_irq_"+c.String()+"_us"] = r.IRQBlameUS[c][worst]
		}
	}
	rr := platforms.RunResult{Metrics: metrics, Samples: samples, Trace: r.Trace, Events: r.Events, Switches: r.Switches}
	if r.TotalMS > 0 {
		rr.Skipped = r.FastForward.Time.Millis() / r.TotalMS
	}
	return rr
}
