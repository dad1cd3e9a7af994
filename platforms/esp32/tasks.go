// The scheduler of tasks.c: task states, event lists, the TCB, the ready and
// delayed lists, context switches and the tick.

package esp32

import (
	"fmt"
	"slices"

	"synclab/sim"
)

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
		k.cpu[c].traced = to
	}
}

// OpenSpans reports the trace spans begun and not yet added: each core's
// running task and each spinlock held (sim.TraceSpanner).
func (k *Kernel) OpenSpans(now sim.Time, add func(sim.Span)) {
	for c := range k.cpu {
		if t := k.cpu[c].traced; t != nil {
			add(sim.Span{Core: c, Lane: "task", Label: t.Name, Start: t.lastIn, End: now})
		}
	}
	for _, m := range k.muxes {
		if m.traced >= 0 {
			add(sim.Span{Core: m.traced, Lane: "lock", Label: m.Name, Start: m.since, End: now})
		}
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
