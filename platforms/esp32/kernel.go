// The kernel's state and construction: the constants FreeRTOSConfig.h sets,
// the per-core globals of tasks.c and port.c (pxCurrentTCB,
// port_uxCriticalNesting), the interrupt dispatch, and the cost accounting
// every kernel path goes through.

package esp32

import (
	"fmt"

	"synclab/sim"
)

// FreeRTOS constants as IDF configures them.
const (
	// MaxPriorities is configMAX_PRIORITIES (esp-idf v5.1
	// components/freertos/esp_additions/arch/xtensa/include/freertos/FreeRTOSConfig_arch.h: 25).
	MaxPriorities = 25
	// PortMaxDelay is portMAX_DELAY: block without timeout.
	PortMaxDelay = ^uint32(0)
	// NoAffinity is tskNO_AFFINITY: the task runs on either core.
	NoAffinity = -1
	// excmLevel is XCHAL_EXCM_LEVEL (3 on the ESP32): taskENTER_CRITICAL
	// masks interrupts up to it (core-isa.h; port.c xPortEnterCriticalTimeout).
	excmLevel = 3
	// idlePriority is tskIDLE_PRIORITY.
	idlePriority = 0
)

// cpuState is the kernel's per-core state: pxCurrentTCB[core], the idle
// task, the critical nesting of port.c, and run-time accounting.
type cpuState struct {
	core       *sim.Core
	cur, idle  *TCB
	nesting    int // port_uxCriticalNesting
	savedLevel int // port_uxOldInterruptState
	reasonAddr sim.Addr
	switchedIn sim.Time
	tick       *sim.Timer
	// outgoing is the task this core last switched away from. It joins
	// the ready list only once the incoming process runs (finishSwitch):
	// until then its coroutine is still executing the switch, and the
	// other core must not resume it (in IDF its context is saved before
	// vTaskSwitchContext publishes it).
	outgoing *TCB
	// selectOwed: this core's last selection would have taken a task
	// that was in transit from the other core. In IDF the switched-out
	// task's frame is saved at interrupt entry, so it is selectable as
	// soon as the other core's vTaskSwitchContext releases xKernelLock;
	// the model keeps the current task, leaves the ready lists as they
	// are, and selects again when the task becomes selectable
	// (finishSwitch).
	selectOwed bool
	// yieldPending is xYieldPending: a task was readied that outranks this
	// core's, and no switch has run since. The tick switches for it, in
	// case an interrupt handler ignored its xHigherPriorityTaskWoken.
	yieldPending bool
	// traced is the task whose trace span on this core is open: the one
	// switched in last (saveContext), while a trace records.
	traced *TCB
	// owed is instruction cycles of the running code not yet simulated;
	// they are run (as one Compute) before the next access to shared
	// memory, interrupt-level change or switch, so that straight-line
	// code costs one simulator step instead of one per C statement.
	owed int64
}

// Kernel is IDF FreeRTOS SMP running on an SoC.
type Kernel struct {
	SoC *SoC
	E   *sim.Engine
	cfg Config
	cpu [NumCores]cpuState
	// KernelLock is xKernelLock: the global spinlock over the task lists
	// and tick state (tasks.c).
	KernelLock *PortMux
	// reasonLock is crosscore_int.c's reason_spinlock.
	reasonLock *PortMux
	tickCount  uint32
	tickAddr   sim.Addr
	// ready is pxReadyTasksLists: the ready and the running tasks of each
	// priority (the idle tasks at 0), in the order the scheduler scans them.
	ready [MaxPriorities][]*TCB
	// readyIndex is each ready list's pxIndex: nil at the list's end
	// marker, where vListInsertEnd puts a task at the tail; else the task
	// it rests on, before which a readied task goes (see pickNext).
	readyIndex [MaxPriorities]*TCB
	// topReady is uxTopReadyPriority: at least the highest priority with a
	// task on its ready list, lowered only when a core selects.
	topReady int
	delayed  []*TCB
	// Tasks lists every created task, idle tasks included.
	Tasks []*TCB
	// Switches counts context switches (task changes on a core).
	Switches int
	started  bool
	// OnPeripheral, when set, runs in the peripheral interrupt's handler.
	OnPeripheral func(p *sim.Proc)
	// guardCycles is the uncontended cost of one SRAM access in cycles.
	guardCycles int64
	// blameLog attributes the peripheral interrupt's latency (nil: off).
	blameLog *blameLog
	// muxes and sems list the spinlocks and semaphores, for Snapshot.
	muxes []*PortMux
	sems  []*Semaphore
	// queues lists the message queues, for Snapshot.
	queues []*Queue
	// notifyAlign is the boundary of each new TCB's notification words
	// (AlignNotifications).
	notifyAlign uint64
}

// NewKernel creates the kernel's static state on a fresh SoC.
func NewKernel(e *sim.Engine, cfg Config) (*Kernel, error) {
	soc, err := NewSoC(e, cfg)
	if err != nil {
		return nil, err
	}
	k := &Kernel{SoC: soc, E: e, cfg: cfg, notifyAlign: 8}
	clk := sim.Clock{Hz: int64(cfg.CPUMHz) * 1_000_000}
	k.guardCycles = max(1, clk.ToCycles(cfg.SRAMLatency+cfg.SRAMOccupancy))
	k.KernelLock = k.NewPortMux("xKernelLock", 8)
	k.reasonLock = k.NewPortMux("reason_spinlock", 8)
	k.tickAddr = soc.Alloc(4, 8)
	for i := range k.cpu {
		pc := &k.cpu[i]
		pc.core = soc.Cores[i]
		pc.reasonAddr = soc.Alloc(4, 8)
		c := i
		pc.core.SetHandler(func(p *sim.Proc, irq sim.IRQ) { k.isr(p, c, irq) })
		pc.core.SetLineLevel(IRQTick, 1)
		pc.core.SetLineLevel(IRQCrosscore, 1)
		pc.core.SetLineLevel(IRQPeripheral, 1)
		pc.tick = pc.core.NewTimer(IRQTick)
	}
	return k, nil
}

// AlignNotifications places the notification words (ulNotifiedValue and
// ucNotifyState) of every task created from now on, idle tasks included, on
// an align-byte boundary: __attribute__((aligned(align))) on the TCB_t
// member, the article's advice against cache-line ping-pong. align is a
// power of two of at least 8 (the simulated word).
func (k *Kernel) AlignNotifications(align uint64) error {
	if align < 8 || align&(align-1) != 0 {
		return fmt.Errorf("notification alignment %d: want a power of two >= 8", align)
	}
	k.notifyAlign = align
	return nil
}

// Config returns the platform configuration the kernel runs with.
func (k *Kernel) Config() Config { return k.cfg }

// isr dispatches the interrupts of core c.
func (k *Kernel) isr(p *sim.Proc, c int, irq sim.IRQ) {
	if b := k.blameLog; b != nil && b.core == p.Core() {
		now := p.Now()
		entered := now - p.Core().Cycles(k.cfg.IRQEntry)
		switch irq {
		case IRQCrosscore:
			b.mark(now, entered, BlameCrosscore)
		case IRQTick:
			b.mark(now, entered, BlameTick)
		case IRQPeripheral:
			b.attribute(now-p.Core().IRQLatency(irq).Last(), entered, now)
			b.mark(now, entered, BlamePeripheral)
		}
	}
	switch irq {
	case IRQCrosscore:
		k.crosscoreISR(p, c)
	case IRQTick:
		k.sysTickHandler(p, c)
	case IRQPeripheral:
		if k.OnPeripheral != nil {
			k.OnPeripheral(p)
			k.flush(p) // the handler's cycles run before its return, as the other handlers' do
		}
	default:
		// A device on a line nobody handles would fire for ever unnoticed.
		p.Fail(fmt.Errorf("esp32: interrupt %d on core %d has no handler in the model: it handles %d (the tick), %d (the crosscore yield) and %d (a peripheral: Kernel.OnPeripheral)",
			irq, c, IRQTick, IRQCrosscore, IRQPeripheral))
	}
}

// TickCount returns xTickCount.
func (k *Kernel) TickCount() uint32 { return k.tickCount }

// Current returns the task running on core c (pxCurrentTCB[c]).
func (k *Kernel) Current(c int) *TCB { return k.cpu[c].cur }

// Idle returns core c's idle task.
func (k *Kernel) Idle(c int) *TCB { return k.cpu[c].idle }

// RunTimeIdleShare returns the idle task's share of core c's time since the
// start (vTaskGetRunTimeStats' idle line), counting the current stretch.
func (k *Kernel) RunTimeIdleShare(c int) float64 {
	pc := &k.cpu[c]
	idle := pc.idle.RunTime
	if pc.cur == pc.idle {
		idle += k.E.Now() - pc.switchedIn
	}
	if k.E.Now() == 0 {
		return 0
	}
	return float64(idle) / float64(k.E.Now())
}

// ---- cost accounting --------------------------------------------------

// coreID is the core p runs on, where every kernel path starts. p must be
// the process running now: a TCB used from another task's function
// (a.SemaphoreTake inside B's) would act for a task that is not running, and
// one used outside Engine.Run has no core; both are refused by name.
func coreID(p *sim.Proc) int {
	if !p.Current() { // cheap, and inlined: this runs on every kernel path
		refuseForeign(p)
	}
	return p.Core().ID
}

// refuseForeign ends the run of the task that used the handle of p's task
// (p not running), naming both; outside the simulation there is no run to
// end, and it panics (a programming error, as the SoC's allocator treats
// one).
func refuseForeign(p *sim.Proc) {
	t, ok := p.Data.(*TCB)
	if !ok {
		return
	}
	r := t.k.E.Running()
	if r == nil {
		panic(fmt.Sprintf("esp32: task %s's TCB used outside the simulation: call its methods from the task's own function, while Engine.Run runs", t.Name))
	}
	r.Fail(fmt.Errorf("esp32: %s called a method of task %s's TCB: a task acts only through the TCB passed to its function", r.Name, t.Name))
}

// maxOwed bounds a core's owed cycles: work past it runs them, so that a
// task that only calls Work in a loop still advances simulated time and
// meets the engine's time limit, event budget and cancellation instead of
// spinning in Go for ever. It is far above what a built-in experiment owes
// at any setting (medium_us = 1e6 at 240 MHz: 2.4e8), whose results it
// leaves unchanged.
const maxOwed = 1 << 32

// work charges n cycles of straight-line code to the running core.
func (k *Kernel) work(p *sim.Proc, n int64) {
	pc := &k.cpu[coreID(p)]
	pc.owed += n
	if pc.owed > maxOwed {
		k.flush(p)
	}
}

// flush runs the owed cycles now.
func (k *Kernel) flush(p *sim.Proc) {
	pc := &k.cpu[coreID(p)]
	if n := pc.owed; n > 0 {
		pc.owed = 0
		p.Compute(n)
	}
}

// guardedLoad and guardedStore access a kernel field that only the holder of
// a spinlock this core holds may touch (a semaphore count, a TCB's
// notification word, the crosscore reason): no other core can race with
// them, so instead of a simulator step they are charged their uncontended
// SRAM cost (latency + port occupancy). Lock words and application data
// stay simulated accesses. The approximation misses only the up-to-one
// poll of a spinning core that an access would wait for at the port.
func (k *Kernel) guardedLoad(p *sim.Proc, a sim.Addr) uint64 {
	k.guarded(p, 1)
	return k.SoC.Mem.Peek(a)
}

func (k *Kernel) guardedStore(p *sim.Proc, a sim.Addr, v uint64) {
	k.guarded(p, 1)
	k.SoC.Mem.Poke(a, v)
}

// guarded charges n accesses to words that the model keeps in Go, such as
// a queue's items, at the cost of guardedLoad's.
func (k *Kernel) guarded(p *sim.Proc, n int64) {
	k.cpu[coreID(p)].owed += n * k.guardCycles
}

// boundary runs the owed cycles, then takes the interrupts deliverable at
// the instruction boundary reached. A memory access cannot be interrupted
// (sim: the core stalls until it completes), so an interrupt asserted while
// one was in flight is pending when it ends, and the core takes it before
// the next instruction, whatever that is: a further load or store, or the
// RSIL of a critical section (which would otherwise mask it for the whole
// section). Compute takes it by itself; call boundary where the next step
// is no Compute.
func (k *Kernel) boundary(p *sim.Proc) {
	k.flush(p)
	p.Restore(p.Core().Level())
}

// load and store are a simulated access to a shared word (a lock word, a
// global variable) at an instruction boundary. With interrupts unmasked,
// the access's stall is logged as BlameInFlight: a peripheral interrupt
// asserted during it waits for it to complete.
func (k *Kernel) load(p *sim.Proc, a sim.Addr) uint64 {
	k.boundary(p)
	unmasked := p.Core().Level() == 0
	if unmasked {
		k.blame(p, coreID(p), BlameInFlight)
	}
	v := p.Load(a)
	if unmasked {
		k.blame(p, coreID(p), BlameEntry)
	}
	return v
}

func (k *Kernel) store(p *sim.Proc, a sim.Addr, v uint64) {
	k.boundary(p)
	unmasked := p.Core().Level() == 0
	if unmasked {
		k.blame(p, coreID(p), BlameInFlight)
	}
	p.Store(a, v)
	if unmasked {
		k.blame(p, coreID(p), BlameEntry)
	}
}
