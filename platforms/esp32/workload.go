package esp32

import (
	"context"
	"fmt"
	"slices"

	"synclab/platforms"
	"synclab/sim"
)

// Workload parameter keys of the critical-section experiment.
const (
	KeyIterations = "iterations"
	KeyTasks      = "tasks"
	KeyCSCycles   = "cs_cycles"
	KeyLoopCycles = "loop_cycles"
	KeyPriorities = "priorities"
	KeyPinning    = "pinning"
	KeyAlign      = "align_bytes"
	KeyPeriphHz   = "periph_hz"
	KeyPeriphISR  = "periph_isr_cycles"
	KeyPSRAM      = "counter_in_psram"
)

const article = "the ESP32 article, \"ESP32 双核环境下 FreeRTOS 任务通知 vs 信号量：临界区保护的性能实测与选型指南\""

// Trace window keys of the critical-section experiment: a trace (when one
// is asked for) covers [trace_from_ms, trace_from_ms + trace_ms).
const (
	KeyTraceFrom = "trace_from_ms"
	KeyTraceSpan = "trace_ms"
)

// TraceParams returns the trace window of RunCriticalSection. They change
// nothing but what a trace records.
func TraceParams() platforms.Params {
	return platforms.Params{
		{Key: KeyTraceFrom, Value: 0, Unit: "ms", Prov: platforms.CODE, Min: 0, Max: 100_000,
			Source: "observation window (no effect on the run)", Doc: "start of the trace window in simulated time (e.g. past the start-up to see the steady state)"},
		{Key: KeyTraceSpan, Value: 2, Unit: "ms", Prov: platforms.CODE, Min: 0.001, Max: 50,
			Source: "observation window (no effect on the run; at most 200,000 spans are kept)", Doc: "length of the trace window"},
	}
}

// WorkloadParams returns the critical-section workload's parameters.
func WorkloadParams() platforms.Params {
	return platforms.Params{
		{Key: KeyIterations, Value: 1_000_000, Unit: "per task", Prov: platforms.CODE, Integer: true, Min: 1, Max: 10_000_000,
			Source: article + " (test scenario: 1,000,000 increments per task)", Doc: "guarded increments each task performs"},
		{Key: KeyTasks, Value: 2, Unit: "tasks", Prov: platforms.CODE, Integer: true, Min: 2, Max: 8,
			Source: article + " (two tasks, one pinned to each core)", Doc: "worker tasks; task i is pinned to core i mod 2 when pinning=1; the notify and queue variants pass a token round the ring"},
		{Key: KeyCSCycles, Value: 0, Unit: "cycles", Prov: platforms.CODE, Integer: true, Min: 0, Max: 1_000_000,
			Source: article + " (the critical section is counter++ only)", Doc: "extra work inside the critical section, besides counter++ (load, add, store)"},
		{Key: KeyLoopCycles, Value: 4, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 0, Max: 1_000_000, Low: 2, High: 10,
			Source: "for-loop increment, compare and branch at -O2 (not measured)", Doc: "work of each iteration outside the critical section"},
		{Key: KeyPriorities, Value: 0, Unit: "mode", Prov: platforms.CODE, Min: 0, Max: 1, Choices: []float64{0, 1},
			Source: article + " (both tasks at priority 10)", Doc: "0: every task at priority 10 (the article); 1: task i at priority 10+i"},
		{Key: KeyPinning, Value: 1, Unit: "mode", Prov: platforms.CODE, Min: 0, Max: 1, Choices: []float64{0, 1},
			Source: article + " (tasks pinned to Core0 and Core1)", Doc: "1: task i pinned to core i mod 2 (xTaskCreatePinnedToCore); 0: tskNO_AFFINITY"},
		{Key: KeyAlign, Value: 8, Unit: "bytes", Prov: platforms.CODE, Min: 8, Max: 64, Choices: []float64{8, 32, 64},
			Source: article + " (advice: __attribute__((aligned(64))) against cache-line ping-pong)", Doc: "alignment of the counter, the sync objects (the queue variant's queues) and each TCB's notification words"},
		{Key: KeyPeriphHz, Value: 1000, Unit: "Hz", Prov: platforms.CODE, Min: 1, Max: 100_000,
			Source: "scenario (a 1 kHz peripheral interrupt on core 0 measures interrupt latency)", Doc: "rate of the periodic peripheral interrupt on core 0 (phase drawn from the seed)"},
		{Key: KeyPeriphISR, Value: 50, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 1, Max: 100_000, Low: 20, High: 200,
			Source: "a handler that acknowledges a timer-group interrupt (not measured)", Doc: "work of the peripheral interrupt's handler"},
		{Key: KeyPSRAM, Value: 0, Unit: "flag", Prov: platforms.CODE, Min: 0, Max: 1, Choices: []float64{0, 1},
			Source: article + " (the board has external SPI RAM)", Doc: "1: the counter lives in PSRAM (EXT_RAM_BSS_ATTR), behind the external-RAM caches, where each line lives in one cache whichever core accesses it (IDF's low/high mode)"},
	}
}

// Variants of the critical-section experiment.
const (
	VariantMutex    = "mutex"
	VariantNotify   = "notify"
	VariantCritical = "critical"
	VariantBinary   = "binary-semaphore"
	VariantQueue    = "queue"
)

// CSVariants lists the critical-section variants in report order.
var CSVariants = []string{VariantMutex, VariantNotify, VariantCritical, VariantBinary, VariantQueue}

// CSResult is what one critical-section run measures, as the article did.
type CSResult struct {
	// TotalMS: esp_timer_get_time from the scheduler start until the last
	// worker finishes.
	TotalMS float64
	// NSPerOp: TotalMS per iteration of one task (the article's "mean
	// latency per operation" is this quotient).
	NSPerOp float64
	// CPUPct: per core, 100% minus the idle task's share of run time
	// (vTaskGetRunTimeStats).
	CPUPct [NumCores]float64
	// BusyPct: per core, 100% minus the time asleep in waiti (state
	// accounting), for checking CPUPct.
	BusyPct [NumCores]float64
	// Peripheral interrupt latency, assertion to handler, in us: the
	// largest, the 99th percentile (sim.Percentile), every one.
	MaxIRQUS, P99IRQUS float64
	IRQLatencyUS       []float64
	// IRQBlameUS splits each of those latencies by what masked the
	// interrupt meanwhile: IRQBlameUS[cause][i] goes with IRQLatencyUS[i]
	// (see BlameCause); the causes of one interrupt add up to its latency.
	IRQBlameUS      [numBlameCauses][]float64
	ContextSwitches int
	IPIs            int
	// Handoffs counts increments made by another task than the one
	// before: how often the guard passed from task to task.
	Handoffs          int
	SyncRAMBytes      int
	Counter, Expected uint64
	// Kernel lock contention: acquisitions that found it held, time spun.
	KernelLockContended int
	KernelLockSpinUS    float64
	ObjectLockSpinUS    float64
	EnergyMJ            float64
	// Events is the number of simulator events the run took (skipped
	// periods count their events).
	Events uint64
	// Switches is how many times a task's coroutine was resumed in the
	// part of the run simulated in detail (sim.Engine.Switches; skipped
	// periods add none).
	Switches uint64
	// FastForward says how much of the run was skipped as repetitions of
	// a periodic stretch (see RunOptions.Detailed).
	FastForward sim.FastForwardStats
	Trace       *sim.Trace
}

// csWorkload is the article's firmware: the shared counter, the sync object
// of the variant and the worker tasks.
type csWorkload struct {
	k          *Kernel
	counter    sim.Addr
	iterations int
	csCycles   int64
	loopCycles int64
	sem        *Semaphore
	mux        *PortMux
	// queues[i] is task i's mailbox in the queue variant's ring.
	queues   []*Queue
	tasks    []*TCB
	finished sim.Time
	last     *TCB // the task that made the last increment
	handoffs int  // increments made by another task than the one before
	// syncBytes is the RAM of the sync objects (0 for notifications).
	syncBytes int
}

// Snapshot records the workload's own state for fast-forward.
func (w *csWorkload) Snapshot(s *sim.Snapshot) {
	sim.Ident(s, w.last)
	s.Int(&w.handoffs)
	s.Time(&w.finished)
}

// criticalSection is `counter++` (l32i, addi, s32i) plus cs_cycles of work.
func (w *csWorkload) criticalSection(t *TCB) {
	if w.last != t {
		w.last = t
		w.handoffs++
	}
	v := t.Load(w.counter)
	t.Work(1 + w.csCycles)
	t.Store(w.counter, v+1)
}

// semaphoreTask is the article's "semaphore" task: xSemaphoreTake(portMAX_DELAY),
// counter++, xSemaphoreGive, a million times.
func (w *csWorkload) semaphoreTask(t *TCB) {
	for range t.Loop(w.iterations) {
		t.SemaphoreTake(w.sem, PortMaxDelay)
		w.criticalSection(t)
		t.SemaphoreGive(w.sem)
		t.Work(w.loopCycles)
	}
	w.finished = max(w.finished, t.Now())
}

// spinlockTask guards the increment with portENTER_CRITICAL/portEXIT_CRITICAL.
func (w *csWorkload) spinlockTask(t *TCB) {
	for range t.Loop(w.iterations) {
		t.EnterCritical(w.mux)
		w.criticalSection(t)
		t.ExitCritical(w.mux)
		t.Work(w.loopCycles)
	}
	w.finished = max(w.finished, t.Now())
}

// notifyTask is the article's handshake: wait for the token
// (ulTaskNotifyTake(pdTRUE, portMAX_DELAY)), counter++, pass the token on
// (xTaskNotifyGive). Strict alternation, not a mutex.
func (w *csWorkload) notifyTask(t *TCB, next *TCB) {
	for range t.Loop(w.iterations) {
		t.NotifyTake(0, true, PortMaxDelay)
		w.criticalSection(t)
		t.NotifyGive(next, 0)
		t.Work(w.loopCycles)
	}
	w.finished = max(w.finished, t.Now())
}

// queueTask is the notify handshake with queues as mailboxes, as firmware
// wrote it before notifications existed: wait for the token in the own queue
// (xQueueReceive(in, &token, portMAX_DELAY)), counter++, pass it to the next
// task's queue (xQueueSend(out, &token, portMAX_DELAY)). Each queue holds
// one 4-byte item; the one token in the ring never finds a queue full.
func (w *csWorkload) queueTask(t *TCB, in, out *Queue) {
	for range t.Loop(w.iterations) {
		t.QueueReceive(in, PortMaxDelay)
		w.criticalSection(t)
		t.QueueSend(out, 1, PortMaxDelay)
		t.Work(w.loopCycles)
	}
	w.finished = max(w.finished, t.Now())
}

// RunOptions say how RunCriticalSection or a scenario (RunPriorityInversion,
// RunNotifyUnblock) runs; none changes its results.
type RunOptions struct {
	// Trace records core states, tasks and locks in the trace window (a
	// scenario's: the whole run).
	Trace bool
	// Detailed simulates every iteration of RunCriticalSection instead of
	// fast-forwarding the periodic stretches between interrupts
	// (sim.Engine.EnableFastForward): the results are the same, bit for
	// bit; only the time taken differs. The scenarios never fast-forward.
	Detailed bool
}

// RunCriticalSection runs the article's experiment for one variant.
// values holds platform and workload parameters (missing keys take their
// defaults); a bad value is an error naming it.
func RunCriticalSection(ctx context.Context, variant string, values map[string]float64, seed uint64, opt RunOptions) (CSResult, error) {
	var res CSResult
	wp, cfg, err := csSettings(values)
	if err != nil {
		return res, err
	}
	if !slices.Contains(CSVariants, variant) {
		return res, fmt.Errorf("variant %q: want one of %v", variant, CSVariants)
	}
	e := sim.NewEngine(seed)
	defer e.Close()
	w, err := newCSWorkload(e, cfg, variant, wp)
	if err != nil {
		return res, err
	}
	k := w.k
	res.SyncRAMBytes = w.syncBytes
	if opt.Trace {
		from := sim.Time(wp.Get(KeyTraceFrom) * float64(sim.Millisecond))
		e.Trace = sim.NewTrace(from, from+sim.Time(wp.Get(KeyTraceSpan)*float64(sim.Millisecond)), platforms.MaxTraceSpans)
		e.SealTrace(k) // so that fast-forward may skip after the window
	}
	k.startPeripheral(wp.Get(KeyPeriphHz), int64(wp.Get(KeyPeriphISR)))
	if err := k.Start(); err != nil {
		return res, err
	}
	if !opt.Detailed {
		e.EnableFastForward(k, w)
	}
	if err := e.Run(ctx); err != nil {
		return res, err
	}
	res.Trace = e.Trace
	res.Events = e.Events()
	res.Switches = e.Switches()
	res.FastForward = e.FastForward()
	res.Counter = k.SoC.Mem.Peek(w.counter)
	res.Expected = uint64(len(w.tasks) * w.iterations)
	k.measure(&res.CPUPct, &res.BusyPct)
	res.TotalMS = w.finished.Millis()
	res.NSPerOp = float64(w.finished.Nanos()) / float64(w.iterations)
	irqs := k.IRQBlame()
	res.IRQLatencyUS = make([]float64, len(irqs))
	for cause := range res.IRQBlameUS {
		res.IRQBlameUS[cause] = make([]float64, len(irqs))
	}
	for i, irq := range irqs {
		res.IRQLatencyUS[i] = irq.Latency.Micros()
		for cause, d := range irq.By {
			res.IRQBlameUS[cause][i] = d.Micros()
		}
	}
	if len(irqs) > 0 {
		sorted := slices.Sorted(slices.Values(res.IRQLatencyUS))
		res.MaxIRQUS, res.P99IRQUS = sorted[len(sorted)-1], sim.Percentile(sorted, 99)
	}
	res.ContextSwitches = k.Switches
	res.Handoffs = w.handoffs
	res.IPIs = k.SoC.IPIs
	res.KernelLockContended = k.KernelLock.Contended
	res.KernelLockSpinUS = k.KernelLock.SpinTime.Micros()
	if w.sem != nil {
		res.ObjectLockSpinUS = w.sem.Lock.SpinTime.Micros()
	}
	if w.mux != nil {
		res.ObjectLockSpinUS = w.mux.SpinTime.Micros()
	}
	for _, q := range w.queues {
		res.ObjectLockSpinUS += q.Lock.SpinTime.Micros()
	}
	for _, c := range k.SoC.Cores {
		res.EnergyMJ += c.EnergyMJ()
	}
	return res, nil
}

// csSettings checks values (missing keys take their defaults) for the
// article's experiment and returns its workload parameters and kernel
// configuration: each value in its range, and a peripheral interrupt that
// leaves core 0 time for its tasks.
func csSettings(values map[string]float64) (platforms.Params, Config, error) {
	wp := append(WorkloadParams(), TraceParams()...)
	if err := wp.SetFrom(values, false); err != nil {
		return nil, Config{}, err
	}
	cfg, err := ConfigFrom(values)
	if err != nil {
		return nil, Config{}, err
	}
	if err := cfg.checkPeripheral(wp.Get(KeyPeriphHz), int64(wp.Get(KeyPeriphISR))); err != nil {
		return nil, Config{}, err
	}
	return wp, cfg, nil
}

// CheckCriticalSection refuses values RunCriticalSection would refuse,
// without running anything (platforms.Experiment.Check).
func CheckCriticalSection(values map[string]float64) error {
	_, _, err := csSettings(values)
	return err
}

// newCSWorkload builds the article's firmware for variant on a fresh kernel
// on e: the counter, the sync object and the worker tasks, every one placed
// as align_bytes says, ready to start.
func newCSWorkload(e *sim.Engine, cfg Config, variant string, wp platforms.Params) (*csWorkload, error) {
	k, err := NewKernel(e, cfg)
	if err != nil {
		return nil, err
	}
	ntasks := int(wp.Get(KeyTasks))
	align := uint64(wp.Get(KeyAlign))
	if err := k.AlignNotifications(align); err != nil {
		return nil, fmt.Errorf("parameter %s: %w", KeyAlign, err)
	}
	w := &csWorkload{k: k, iterations: int(wp.Get(KeyIterations)),
		csCycles: int64(wp.Get(KeyCSCycles)), loopCycles: int64(wp.Get(KeyLoopCycles))}
	if wp.Get(KeyPSRAM) == 1 {
		w.counter = k.SoC.AllocPSRAM(4, align)
	} else {
		w.counter = k.SoC.Alloc(4, align)
	}
	switch variant {
	case VariantMutex:
		w.sem, err = k.NewSemaphore("sem", Mutex, 1, 1, align)
	case VariantBinary:
		// xSemaphoreCreateBinary starts empty; app_main gives it once.
		w.sem, err = k.NewSemaphore("sem", Binary, 1, 1, align)
	case VariantCritical:
		w.mux = k.NewPortMux("mux", align)
		w.syncBytes = portMuxBytes
	case VariantNotify:
		// No object: the state lives in each TCB (NotifyStateBytes per
		// index, there whether the task uses notifications or not).
	case VariantQueue:
		w.queues = make([]*Queue, ntasks)
		for i := range w.queues {
			if w.queues[i], err = k.newQueue(fmt.Sprintf("q%d", i), 1, 4, align); err != nil {
				return nil, err
			}
			w.syncBytes += w.queues[i].Bytes
		}
		w.queues[0].put(1) // app_main sends the token to task0 before the scheduler starts
	}
	if err != nil {
		return nil, err
	}
	if w.sem != nil {
		w.syncBytes = w.sem.Bytes
	}
	w.tasks = make([]*TCB, ntasks)
	for i := range w.tasks {
		prio, core := 10, i%NumCores
		if wp.Get(KeyPriorities) == 1 {
			prio = 10 + i
		}
		if wp.Get(KeyPinning) == 0 {
			core = NoAffinity
		}
		var fn func(t *TCB)
		switch variant {
		case VariantMutex, VariantBinary:
			fn = w.semaphoreTask
		case VariantCritical:
			fn = w.spinlockTask
		case VariantNotify:
			next := (i + 1) % ntasks
			fn = func(t *TCB) { w.notifyTask(t, w.tasks[next]) }
		case VariantQueue:
			in, out := w.queues[i], w.queues[(i+1)%ntasks]
			fn = func(t *TCB) { w.queueTask(t, in, out) }
		}
		if w.tasks[i], err = k.CreateTask(fmt.Sprintf("task%d", i), prio, core, fn); err != nil {
			return nil, err
		}
	}
	if variant == VariantNotify {
		k.SoC.Mem.Poke(w.tasks[0].valueAddr(0), 1) // the token starts with task0
	}
	return w, nil
}

// checkPeripheral refuses a peripheral interrupt at hz with a handler of
// isrCycles that, with the tick, leaves core 0 no time for its tasks: the
// run would never end.
func (cfg Config) checkPeripheral(hz float64, isrCycles int64) error {
	period := sim.Time(float64(sim.Second) / hz)
	if period <= 0 {
		return fmt.Errorf("parameter %s: value %g gives a zero period", KeyPeriphHz, hz)
	}
	// The share of core 0 its periodic handlers take at the least (entry,
	// body and exit; the tick's context switches and contention only add):
	// from 1 on, an interrupt is pending again before the last one returns.
	hzCPU := float64(cfg.CPUMHz) * 1e6
	n := cfg.IRQEntry + isrCycles + cfg.IRQExit
	periph := float64(n) * hz / hzCPU
	tick := float64(cfg.IRQEntry+cfg.TickBody+cfg.IRQExit) * float64(cfg.TickHz) / hzCPU
	if periph+tick >= 1 {
		return fmt.Errorf("parameters %s = %g, %s = %d, %s = %d, %s = %d and %s = %d: the peripheral interrupt's entry, handler and exit (%d cycles, %v) every %v take, with the tick, %.0f%% of core 0, which would never run its tasks again (want under 100%%)",
			KeyPeriphHz, hz, KeyPeriphISR, isrCycles, KeyIRQEntry, cfg.IRQEntry, KeyIRQExit, cfg.IRQExit, KeyCPUMHz, cfg.CPUMHz,
			n, sim.Time(float64(n)/hzCPU*float64(sim.Second)), period, 100*(periph+tick))
	}
	return nil
}

// startPeripheral attaches the periodic peripheral interrupt to core 0 with
// a phase drawn from the run's seed (its timer is not synchronised with the
// tick), at a rate and cost checkPeripheral accepts.
func (k *Kernel) startPeripheral(hz float64, isrCycles int64) {
	period := sim.Time(float64(sim.Second) / hz)
	phase := sim.Time(k.E.Stream("esp32/periph-phase").Int64N(int64(period)))
	k.OnPeripheral = func(p *sim.Proc) {
		k.work(p, isrCycles)
		k.flush(p)
	}
	k.blameLog = &blameLog{core: k.SoC.Cores[0]}
	core := k.SoC.Cores[0]
	k.E.At(phase, sim.NewEvent(func() {
		// The device's first interrupt comes one period after it is enabled.
		// NewDevice fails only on a period <= 0, which checkPeripheral refuses.
		_, _ = core.NewDevice("periph", IRQPeripheral, period, false)
	}, true))
}

// measure fills CPU use as vTaskGetRunTimeStats reports it, and the busy
// share from the cores' state accounting.
func (k *Kernel) measure(cpu, busy *[NumCores]float64) {
	now := k.E.Now()
	for i, c := range k.SoC.Cores {
		cpu[i] = 100 * (1 - k.RunTimeIdleShare(i))
		if now > 0 {
			busy[i] = 100 * (1 - float64(c.Residency(sim.StateWFI))/float64(now))
		}
	}
}
