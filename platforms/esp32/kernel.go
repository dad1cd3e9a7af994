package esp32

import (
	"fmt"
	"slices"

	"synclab/sim"
)

// FreeRTOS constants as IDF configures them.
const (
	// MaxPriorities is configMAX_PRIORITIES (esp-idf FreeRTOSConfig.h: 25).
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

// spinlock.h: the lock word holds SPINLOCK_FREE or the owner's PRID value.
const spinlockFree = 0xB33FFFFF

var coreIDRegval = [NumCores]uint64{0xCDCD, 0xABAB} // CORE_ID_REGVAL_PRO, CORE_ID_REGVAL_APP

// crosscore reasons (esp_system/crosscore_int.c REASON_YIELD).
const reasonYield = 1 << 0

// TaskState is eTaskState.
type TaskState uint8

// Task states.
const (
	Ready TaskState = iota
	Running
	Blocked
	Deleted
)

var stateNames = [...]string{"ready", "running", "blocked", "deleted"}

func (s TaskState) String() string { return stateNames[s] }

// PortMux is a portMUX_TYPE spinlock (esp_hw_support/include/spinlock.h): an
// owner word in SRAM taken with S32C1I compare-and-set in a tight retry loop,
// with no backoff and no fairness, plus a nesting count.
type PortMux struct {
	Name string
	// Addr is the owner word; the count follows it in the struct.
	Addr  sim.Addr
	owner int // core holding it, -1 when free (mirror of the word)
	count int
	since sim.Time // when the holder took it, for trace spans
	// spinFrom is when each core began spinning on it.
	spinFrom [NumCores]sim.Time
	// Statistics: acquisitions, those that found it held, time spun.
	Acquires, Contended int
	SpinTime            sim.Time
}

// Size of portMUX_TYPE: owner and count, two 32-bit words (spinlock.h).
const portMuxBytes = 8

// EventList is a FreeRTOS event list (xTasksWaitingToReceive): tasks in
// priority order, FIFO among equal priorities (vListInsert with item value
// configMAX_PRIORITIES - priority, inserted after equal values).
type EventList struct {
	Name  string
	tasks []*TCB
}

func (l *EventList) insert(t *TCB) {
	i := 0
	for i < len(l.tasks) && l.tasks[i].Priority >= t.Priority {
		i++
	}
	l.tasks = append(l.tasks, nil)
	copy(l.tasks[i+1:], l.tasks[i:])
	l.tasks[i] = t
	t.event = l
}

func (l *EventList) remove(t *TCB) {
	l.tasks = dropTask(l.tasks, t)
	t.event = nil
}

// dropTask removes t from the task list l, keeping the others' order
// (uxListRemove), and returns the shortened list.
func dropTask(l []*TCB, t *TCB) []*TCB {
	if i := slices.Index(l, t); i >= 0 {
		return slices.Delete(l, i, i+1)
	}
	return l
}

// Len returns the number of waiting tasks.
func (l *EventList) Len() int { return len(l.tasks) }

// TCB is a task control block: the task's process, priorities, affinity,
// state and notification slots.
type TCB struct {
	Name string
	Proc *sim.Proc
	k    *Kernel
	// Priority is uxPriority (raised by inheritance), BasePriority
	// uxBasePriority.
	Priority, BasePriority int
	// Affinity is the core the task is pinned to, or NoAffinity.
	Affinity int
	State    TaskState
	event    *EventList
	// timeout handling: absolute wake tick while on the delayed list
	wakeTick uint32
	delayed  bool
	timedOut bool
	// MutexesHeld is uxMutexesHeld.
	MutexesHeld int
	// notification slots: value and state words in the TCB in SRAM
	notifyAddr sim.Addr
	// RunTime is ulRunTimeCounter (vTaskGetRunTimeStats).
	RunTime sim.Time
	lastIn  sim.Time // when it last started running, for trace spans
	// inTransit: switched away from but its context not yet handed over
	// (see cpuState.outgoing).
	inTransit bool
}

// Notification states (ucNotifyState).
const (
	notWaitingNotification = 0
	waitingNotification    = 1
	notificationReceived   = 2
)

// TCB fields the model keeps in SRAM: ulNotifiedValue and ucNotifyState per
// index, each its own simulated word. tcbBytes is sizeof(TCB_t) with IDF v5
// defaults (DERIVED: ~360 bytes with the name, stack pointers, lists,
// run-time counter, TLS pointers), used only for the allocator.
const tcbBytes = 360

func (t *TCB) valueAddr(idx int) sim.Addr { return t.notifyAddr + sim.Addr(16*idx) }
func (t *TCB) stateAddr(idx int) sim.Addr { return t.notifyAddr + sim.Addr(16*idx+8) }

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
	// sliceOwed: this core's tick found no other ready task of the
	// running one's priority only because such a task was in transit on
	// the other core. In IDF the preempted task's frame is saved at
	// interrupt entry, so it is selectable as soon as the other core's
	// vTaskSwitchContext releases xKernelLock, and this tick would have
	// time-sliced; finishSwitch owes the slice when the task becomes ready.
	sliceOwed bool
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
	ready      [MaxPriorities][]*TCB // ready, not running
	delayed    []*TCB
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
}

// NewKernel creates the kernel's static state on a fresh SoC.
func NewKernel(e *sim.Engine, cfg Config) (*Kernel, error) {
	soc, err := NewSoC(e, cfg)
	if err != nil {
		return nil, err
	}
	k := &Kernel{SoC: soc, E: e, cfg: cfg}
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

// Config returns the platform configuration the kernel runs with.
func (k *Kernel) Config() Config { return k.cfg }

// NewPortMux allocates a spinlock word in SRAM aligned to align bytes
// (portMUX_INITIALIZER_UNLOCKED).
func (k *Kernel) NewPortMux(name string, align uint64) *PortMux {
	return k.portMuxAt(name, k.SoC.Alloc(portMuxBytes, align))
}

// portMuxAt initializes the spinlock whose owner word is at addr (free,
// portMUX_INITIALIZER_UNLOCKED), for a new lock or one inside another
// object (a queue's xQueueLock).
func (k *Kernel) portMuxAt(name string, addr sim.Addr) *PortMux {
	k.SoC.Mem.Poke(addr, spinlockFree)
	m := &PortMux{Name: name, Addr: addr, owner: -1}
	k.muxes = append(k.muxes, m)
	return m
}

// TickCount returns xTickCount.
func (k *Kernel) TickCount() uint32 { return k.tickCount }

// Current returns the task running on core c (pxCurrentTCB[c]).
func (k *Kernel) Current(c int) *TCB { return k.cpu[c].cur }

// Idle returns core c's idle task.
func (k *Kernel) Idle(c int) *TCB { return k.cpu[c].idle }

// ---- cost accounting --------------------------------------------------

func coreID(p *sim.Proc) int { return p.Core().ID }

// work charges n cycles of straight-line code to the running core.
func (k *Kernel) work(p *sim.Proc, n int64) { k.cpu[coreID(p)].owed += n }

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
	k.cpu[coreID(p)].owed += k.guardCycles
	return k.SoC.Mem.Peek(a)
}

func (k *Kernel) guardedStore(p *sim.Proc, a sim.Addr, v uint64) {
	k.cpu[coreID(p)].owed += k.guardCycles
	k.SoC.Mem.Poke(a, v)
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

// ---- port.c critical sections ----------------------------------------

// enterCritical is taskENTER_CRITICAL(mux) (port.c xPortEnterCriticalTimeout
// with spinlock_acquire): raise the interrupt level to XCHAL_EXCM_LEVEL,
// read the owner word, take the spinlock with S32C1I (or nest it when the
// word shows this core), count the nesting.
//
// The core is read only once interrupts are masked, as port.c does
// (XTOS_SET_INTLEVEL first, then spinlock_acquire's RSR PRID and
// xPortGetCoreID for port_uxCriticalNesting[coreID]): the code before the
// RSIL runs unmasked, so an unpinned task can be preempted there and resume
// on the other core, and a core number read earlier would be stale.
func (k *Kernel) enterCritical(p *sim.Proc, m *PortMux) {
	k.boundary(p) // code before the RSIL runs unmasked (and may migrate the task)
	prev := p.Mask(excmLevel)
	c := coreID(p) // fixed from here until the outermost exit
	pc := &k.cpu[c]
	if prev == 0 {
		k.blame(p, c, BlameCritical)
	}
	// spinlock_acquire reads lock->owner first (a plain l32i of the owner
	// word, at the shared SRAM port like any access): its own core id means
	// a nested acquire, anything else leads to the S32C1I attempts, even
	// when the word shows the other core's id (CODE: esp-idf v5.x
	// components/esp_hw_support/include/spinlock.h, spinlock_acquire:
	// `if (lock->owner == core_id)` before the first esp_cpu_compare_and_set).
	// Nothing is owed here: boundary ran it, and interrupt handlers leave
	// nothing owed (k.isr).
	if p.Load(m.Addr) == coreIDRegval[c] {
		m.count++
	} else {
		m.Acquires++
		switch {
		case m.owner >= 0:
			m.Contended++
			m.spinFrom[c] = p.Now() // kept in the lock, not a local: see sim.Proc.Loop
			p.SpinCAS(m.Addr, spinlockFree, coreIDRegval[c], k.cfg.SpinLoop)
			m.SpinTime += p.Now() - m.spinFrom[c]
		case k.SoC.Mem.Peek(m.Addr) == spinlockFree:
			// The word is free at this instant, the CAS's issue, and an
			// access takes effect at its issue: the first S32C1I succeeds,
			// exactly as SpinCAS's first attempt would, without its set-up.
			p.CAS(m.Addr, spinlockFree, coreIDRegval[c])
		default:
			// Taken by a CAS whose stall has not ended (the mirror lags).
			p.SpinCAS(m.Addr, spinlockFree, coreIDRegval[c], k.cfg.SpinLoop)
		}
		m.owner, m.count, m.since = c, 1, p.Now()
		if k.cfg.Asserts {
			// spinlock.h, on success: assert(lock->owner == core_owner_id).
			k.load(p, m.Addr)
		}
	}
	// PRID read, owner check, count and nesting updates: charged after the
	// S32C1I, inside the masked region, where most of them run.
	pc.owed += k.cfg.SpinlockPair / 2
	if pc.nesting == 0 {
		pc.savedLevel = prev
	}
	pc.nesting++
}

// exitCritical is taskEXIT_CRITICAL(mux): drop the nesting, release the
// spinlock with a plain store when its count reaches zero, and restore the
// interrupt level when the core's last critical section ends. Pending
// interrupts (a yield among them) are taken right there.
func (k *Kernel) exitCritical(p *sim.Proc, m *PortMux) {
	if k.release(p, m) {
		pc := &k.cpu[coreID(p)]
		k.flush(p)
		if pc.savedLevel == 0 {
			k.blame(p, coreID(p), BlameEntry) // unmasked: a pending interrupt is taken now
		}
		p.Restore(pc.savedLevel)
		// The rest runs unmasked: an interrupt taken in Restore may have
		// switched the task out and resumed it on the other core, so pc
		// is stale; the cycles go to the core the task runs on now.
		k.work(p, k.cfg.SpinlockPair/2) // nesting bookkeeping and return
	}
}

// release frees m (or drops one nesting level) and reports whether the
// core left its outermost critical section.
func (k *Kernel) release(p *sim.Proc, m *PortMux) bool {
	c := coreID(p)
	if m.owner != c {
		p.Fail(fmt.Errorf("esp32: core %d exits critical section on %s held by core %d", c, m.Name, m.owner))
		return false
	}
	if k.cfg.Asserts {
		// spinlock_release: assert(core_owner_id == lock->owner) first.
		k.load(p, m.Addr)
	}
	m.count--
	if m.count == 0 {
		// The holder's owed cycles run before the releasing store: until it
		// issues, the lock is held (the mirror must say so, or a core that
		// arrives meanwhile spins without being counted as contended).
		k.flush(p)
		m.owner = -1
		k.store(p, m.Addr, spinlockFree)
		if tr := k.E.Trace; tr != nil {
			tr.Add(sim.Span{Core: c, Lane: "lock", Label: m.Name, Start: m.since, End: p.Now()})
		}
	}
	pc := &k.cpu[c]
	pc.nesting--
	return pc.nesting == 0
}

// ---- crosscore interrupt (esp_system/crosscore_int.c) ---------------------

// crosscoreSendYield is esp_crosscore_int_send_yield(target): set the yield
// reason under reason_spinlock and trigger the FROM_CPU interrupt. On the
// sender's own core this is portYIELD_WITHIN_API: the interrupt stays pending
// until the interrupt level drops (esp-idf xtensa portmacro.h, comment above
// portYIELD_WITHIN_API).
func (k *Kernel) crosscoreSendYield(p *sim.Proc, target int) {
	k.enterCritical(p, k.reasonLock)
	a := k.cpu[target].reasonAddr
	r := k.guardedLoad(p, a)
	k.guardedStore(p, a, r|reasonYield)
	k.exitCritical(p, k.reasonLock)
	k.work(p, k.cfg.CrosscoreTrigger)
	k.flush(p)
	k.SoC.crosscoreRaise(p, target)
	if target == coreID(p) {
		// The own-core interrupt is taken at the next instruction if the
		// level allows; inside a critical section it waits for the exit.
		p.Restore(p.Core().Level())
	}
}

// yieldWithinAPI is portYIELD_WITHIN_API: a crosscore interrupt to the own
// core, taken as soon as interrupts are enabled. It returns when the calling
// task runs again.
func (k *Kernel) yieldWithinAPI(p *sim.Proc) {
	k.crosscoreSendYield(p, coreID(p))
}

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
			lat := p.Core().IRQLatency(irq)
			b.attribute(now-lat[len(lat)-1], entered, now)
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
	}
}

// crosscoreISR is esp_crosscore_isr: read and clear the reasons under
// reason_spinlock, then portYIELD_FROM_ISR when a yield was asked for.
func (k *Kernel) crosscoreISR(p *sim.Proc, c int) {
	k.work(p, k.cfg.CrossISR)
	k.enterCritical(p, k.reasonLock)
	a := k.cpu[c].reasonAddr
	r := k.guardedLoad(p, a)
	k.guardedStore(p, a, 0)
	k.exitCritical(p, k.reasonLock)
	if r&reasonYield != 0 {
		k.switchContext(p, c, false)
	}
	k.flush(p)
}

// ---- scheduler (tasks.c) ---------------------------------------------------

func canRunOn(t *TCB, c int) bool { return t.Affinity == NoAffinity || t.Affinity == c }

// running reports whether t is some core's current task.
func (k *Kernel) running(t *TCB) bool {
	for i := range k.cpu {
		if k.cpu[i].cur == t {
			return true
		}
	}
	return false
}

// pickNext is taskSELECT_HIGHEST_PRIORITY_TASK for core c: the first task of
// the highest non-empty priority that may run on c; the idle task otherwise.
func (k *Kernel) pickNext(c int) *TCB {
	for prio := MaxPriorities - 1; prio > idlePriority; prio-- {
		l := k.ready[prio]
		for i, t := range l {
			if canRunOn(t, c) {
				copy(l[i:], l[i+1:])
				k.ready[prio] = l[:len(l)-1]
				return t
			}
		}
	}
	return k.cpu[c].idle
}

func (k *Kernel) removeReady(t *TCB) {
	k.ready[t.Priority] = dropTask(k.ready[t.Priority], t)
}

// readyForCore reports whether a task of priority prio or higher is ready
// for core c (the time-slicing and preemption test).
func (k *Kernel) readyForCore(c, prio int) bool {
	for p := MaxPriorities - 1; p >= prio && p > idlePriority; p-- {
		for _, t := range k.ready[p] {
			if canRunOn(t, c) {
				return true
			}
		}
	}
	return false
}

// switchContext is vTaskSwitchContext run from an ISR's exit (portYIELD_FROM_ISR):
// under xKernelLock, charge the outgoing task's run time, put it back at the
// tail of its ready list if it can still run, pick the next task; then save
// and restore contexts. slice says the tick asked for a time slice: when the
// only peer to rotate to is in transit on the other core, the slice is owed
// to this core until it becomes ready (cpuState.sliceOwed).
func (k *Kernel) switchContext(p *sim.Proc, c int, slice bool) {
	pc := &k.cpu[c]
	if pc.nesting != 0 {
		// The interrupted code cannot be in a critical section (it masks
		// the interrupt that brought us here) and the ISR has left its own:
		// a switch now would carry a held portMUX to another task or core.
		p.Fail(fmt.Errorf("esp32: context switch on core %d inside a critical section (nesting %d)", c, pc.nesting))
	}
	// The Xtensa port saves the interrupted frame at interrupt entry
	// (irq_entry_cycles); the selection comes first on the exit path, the
	// register-window spill and the restore of the next task after it.
	k.enterCritical(p, k.KernelLock)
	k.work(p, k.cfg.SwitchSelect)
	cur := pc.cur
	now := p.Now()
	cur.RunTime += now - pc.switchedIn
	pc.switchedIn = now
	next := cur
	if cur.State == Running && cur != pc.idle && !k.readyForCore(c, cur.Priority) {
		// Nothing of equal or higher priority is ready for c (pickNext would
		// find the idle task or a lower priority): keep running, and leave
		// the ready lists as they are.
		if slice && k.inTransitFor(c, cur.Priority) {
			pc.sliceOwed = true
		}
	} else {
		next = k.pickNext(c)
	}
	if next != cur {
		pc.sliceOwed = false // a switch settles any owed slice
		if cur.State == Running {
			cur.State = Ready // preempted or rotated: ready again once switched out
		}
		cur.inTransit = true
		pc.outgoing = cur
	}
	next.State = Running
	pc.cur = next
	k.exitCritical(p, k.KernelLock)
	if next == cur {
		return
	}
	k.saveContext(p, c, cur, next)
	p.SwitchTo(next.Proc)
	k.finishSwitch(p)
}

// saveContext counts a switch on core c from task from to task to and runs
// its cost (register-window spill, context save and restore), ending from's
// trace span.
func (k *Kernel) saveContext(p *sim.Proc, c int, from, to *TCB) {
	k.Switches++
	k.blame(p, c, BlameSwitch)
	k.work(p, k.cfg.SwitchSave)
	k.flush(p)
	if tr := k.E.Trace; tr != nil {
		tr.Add(sim.Span{Core: c, Lane: "task", Label: from.Name, Start: from.lastIn, End: p.Now()})
		to.lastIn = p.Now()
	}
}

// finishSwitch runs in the incoming process right after a switch: the task
// its core switched away from becomes selectable (if it is ready).
func (k *Kernel) finishSwitch(p *sim.Proc) {
	pc := &k.cpu[coreID(p)]
	t := pc.outgoing
	if t == nil {
		return
	}
	pc.outgoing = nil
	t.inTransit = false
	if t.State != Ready || t.Priority == idlePriority {
		return // an idle task is picked by pickNext without a ready list
	}
	k.ready[t.Priority] = append(k.ready[t.Priority], t)
	// It may have been woken during the switch, when its waker could not
	// yet tell a core to run it: ask now, as the waker's yield would have.
	for c := range k.cpu {
		if canRunOn(t, c) && t.Priority > k.cpu[c].cur.Priority {
			k.raiseYield(c)
			k.SoC.IPIs++
			return
		}
	}
	// A tick that missed it while in transit takes its time slice now
	// (no crosscore interrupt in IDF: that tick ISR would have yielded).
	for c := range k.cpu {
		oc := &k.cpu[c]
		if oc.sliceOwed && canRunOn(t, c) && t.Priority == oc.cur.Priority {
			oc.sliceOwed = false
			k.raiseYield(c)
			return
		}
	}
}

// raiseYield makes core c's yield interrupt pending at once with the yield
// reason set, for the model's own bookkeeping (no simulated access: it
// stands for a decision the kernel took earlier under its locks).
func (k *Kernel) raiseYield(c int) {
	a := k.cpu[c].reasonAddr
	k.SoC.Mem.Poke(a, k.SoC.Mem.Peek(a)|reasonYield)
	k.SoC.Cores[c].Raise(IRQCrosscore)
}

// inTransitFor reports whether a ready task of priority prio that may run
// on core c is in transit on another core (see cpuState.sliceOwed).
func (k *Kernel) inTransitFor(c, prio int) bool {
	for i := range k.cpu {
		if t := k.cpu[i].outgoing; i != c && t != nil && t.State == Ready && canRunOn(t, c) && t.Priority == prio {
			return true
		}
	}
	return false
}

// makeReady moves an unblocked task to its ready list (prvAddTaskToReadyList)
// and decides who must yield (taskIS_YIELD_REQUIRED): it returns true when
// the task outranks the one running on the calling core, and sends the other
// core a yield interrupt when the task may run there and outranks its
// current task. A task that was woken before its own core switched it out
// simply keeps running. Call it under xKernelLock.
func (k *Kernel) makeReady(p *sim.Proc, t *TCB) bool {
	if t.delayed {
		k.removeDelayed(t)
	}
	if k.running(t) {
		t.State = Running
		return false
	}
	if t.inTransit {
		t.State = Ready // joins the ready list when its switch completes
		return false
	}
	t.State = Ready
	k.ready[t.Priority] = append(k.ready[t.Priority], t)
	c := coreID(p)
	if canRunOn(t, c) && t.Priority > k.cpu[c].cur.Priority {
		return true
	}
	for o := range k.cpu {
		if o != c && canRunOn(t, o) && t.Priority > k.cpu[o].cur.Priority {
			k.crosscoreSendYield(p, o)
			break
		}
	}
	return false
}

// block is vTaskPlaceOnEventList + prvAddCurrentTaskToDelayedList for the
// calling task: onto the event list (if any) in priority order, and onto the
// delayed list when the wait has a timeout. Call it under xKernelLock, then
// yield once the critical sections are left.
func (k *Kernel) block(p *sim.Proc, t *TCB, l *EventList, ticks uint32, desc string) {
	k.work(p, k.cfg.BlockBody)
	t.State = Blocked
	t.timedOut = false
	if l != nil {
		l.insert(t)
	}
	timed := ticks != PortMaxDelay
	if timed {
		t.wakeTick = k.tickCount + ticks
		t.delayed = true
		k.delayed = append(k.delayed, t)
	}
	p.SetWaiting(desc, timed)
}

func (k *Kernel) removeDelayed(t *TCB) {
	k.delayed = dropTask(k.delayed, t)
	t.delayed = false
}

// unblock takes a blocked task off its event list (xTaskRemoveFromEventList)
// and readies it; it reports whether the caller's core must yield.
func (k *Kernel) unblock(p *sim.Proc, t *TCB) bool {
	if t.event != nil {
		t.event.remove(t)
	}
	k.work(p, k.cfg.BlockBody)
	t.Proc.SetWaiting("", false)
	return k.makeReady(p, t)
}

// sysTickHandler is port_systick.c xPortSysTickHandler: core 0 runs
// xTaskIncrementTick (tick count, timeouts), core 1 xTaskIncrementTickOtherCores;
// both time-slice among equal priorities and yield from the ISR if needed.
func (k *Kernel) sysTickHandler(p *sim.Proc, c int) {
	k.work(p, k.cfg.TickBody)
	k.enterCritical(p, k.KernelLock)
	yield := false
	if c == 0 {
		k.tickCount++
		k.guardedStore(p, k.tickAddr, uint64(k.tickCount))
		for i := 0; i < len(k.delayed); {
			t := k.delayed[i]
			if int32(k.tickCount-t.wakeTick) >= 0 {
				t.timedOut = true
				if k.unblock(p, t) {
					yield = true
				}
				continue // unblock removed it from k.delayed
			}
			i++
		}
	}
	cur := k.cpu[c].cur
	if k.readyForCore(c, cur.Priority) {
		yield = true // a task outranks the idle task, or configUSE_TIME_SLICING
	}
	// A time slice among equal priorities, possibly with a peer in transit.
	slice := cur != k.cpu[c].idle && (yield || k.inTransitFor(c, cur.Priority))
	k.exitCritical(p, k.KernelLock)
	if yield || slice {
		k.switchContext(p, c, slice)
	}
	k.flush(p)
}

// ---- task creation and the scheduler start ---------------------------------

// CreateTask is xTaskCreatePinnedToCore: a task of the given priority pinned
// to core (or NoAffinity) running fn. Tasks created before Start begin when
// the scheduler starts.
func (k *Kernel) CreateTask(name string, prio, core int, fn func(t *TCB)) (*TCB, error) {
	if prio <= idlePriority || prio >= MaxPriorities {
		return nil, fmt.Errorf("task %q: priority %d out of range [1, %d]", name, prio, MaxPriorities-1)
	}
	if core != NoAffinity && (core < 0 || core >= NumCores) {
		return nil, fmt.Errorf("task %q: core %d: want 0, 1 or NoAffinity (-1)", name, core)
	}
	if k.started {
		return nil, fmt.Errorf("task %q: created after the scheduler started (not modelled)", name)
	}
	t := k.newTCB(name, prio, core)
	t.Proc = k.E.NewProc(name, false, func(p *sim.Proc) {
		// A task starts from its initial stack frame: interrupts enabled.
		k.finishSwitch(p)
		p.Restore(0)
		fn(t)
		k.taskExit(p, t)
	})
	t.Proc.Data = t
	t.State = Ready
	k.ready[prio] = append(k.ready[prio], t)
	return t, nil
}

func (k *Kernel) newTCB(name string, prio, core int) *TCB {
	t := &TCB{Name: name, k: k, Priority: prio, BasePriority: prio, Affinity: core}
	k.SoC.Alloc(tcbBytes, 8) // the TCB itself: only its place in SRAM matters
	t.notifyAddr = k.SoC.Alloc(uint64(16*k.cfg.NotifyEntries), 8)
	k.Tasks = append(k.Tasks, t)
	return t
}

// Start is vTaskStartScheduler: one idle task per core (waiti until an
// interrupt), the first task on each core, and the per-core ticks.
func (k *Kernel) Start() error {
	if k.started {
		return fmt.Errorf("scheduler already started")
	}
	k.started = true
	period := sim.Second / sim.Time(k.cfg.TickHz)
	for i := range k.cpu {
		pc := &k.cpu[i]
		idle := k.newTCB(fmt.Sprintf("IDLE%d", i), idlePriority, i)
		idle.Proc = k.E.NewProc(idle.Name, true, func(p *sim.Proc) { k.idleTask(p) })
		idle.Proc.Data = idle
		pc.idle = idle
	}
	for i := range k.cpu {
		pc := &k.cpu[i]
		next := k.pickNext(i)
		next.State = Running
		pc.cur = next
		pc.switchedIn = k.E.Now()
		next.lastIn = k.E.Now()
		pc.core.Start(next.Proc)
		if err := pc.tick.Periodic(period, k.E.Now()+period); err != nil {
			return err
		}
	}
	return nil
}

// idleTask is prvIdleTask on an ESP32: its hooks, then waiti 0 until an
// interrupt (esp_cpu_wait_for_intr); the interrupt's handler may switch to a
// task, and the idle task goes on from here when it is switched back.
func (k *Kernel) idleTask(p *sim.Proc) {
	k.finishSwitch(p)
	p.Restore(0)
	for range p.Loop(-1) {
		k.work(p, k.cfg.IdleLoop)
		k.flush(p)
		p.WFI()
	}
}

// taskExit is vTaskDelete(NULL) at the end of a task function: the task
// leaves every list under xKernelLock and its core goes on with the next task.
// The process then finishes; the core is handed over by an event at the same
// instant, once the process is done (sim.Core.Start refuses a live process).
func (k *Kernel) taskExit(p *sim.Proc, t *TCB) {
	k.enterCritical(p, k.KernelLock)
	c := coreID(p) // read under the mask: the task may have migrated before it
	pc := &k.cpu[c]
	k.work(p, k.cfg.BlockBody)
	now := p.Now()
	t.RunTime += now - pc.switchedIn
	pc.switchedIn = now
	t.State = Deleted
	pc.outgoing = nil
	next := k.pickNext(c)
	next.State = Running
	pc.cur = next
	// Leave the interrupt level raised: the process ends here, and the
	// next task restores its own level when it resumes.
	k.release(p, k.KernelLock)
	k.saveContext(p, c, t, next)
	core := pc.core
	k.E.After(0, sim.NewEvent(func() { core.Start(next.Proc) }, false))
}

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
