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

// String is the state's name (FreeRTOS's eTaskState without its e).
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
	// (see cpuState.outgoing); wokenInTransit: made ready meanwhile, by a
	// waker that could not yet yield a core for it (see finishSwitch).
	inTransit, wokenInTransit bool
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

// pickNext is taskSELECT_HIGHEST_PRIORITY_TASK on IDF SMP
// (taskSelectHighestPriorityTaskSMP) for core c: from the highest non-empty
// priority down, the first task from the head of its ready list that may
// run on c and is not another core's current task, moved to the tail of its
// list: IDF's "best effort round robin" (CODE: esp-idf v5.1
// components/freertos/FreeRTOS-Kernel/tasks.c, taskSelectHighestPriorityTaskSMP;
// DOC: ESP-IDF v5.1 Programming Guide, "FreeRTOS (IDF)", Time Slicing). The
// lists hold the running tasks too, and the idle tasks at priority 0, so
// the search always ends with a task. It lowers uxTopReadyPriority to the
// highest non-empty list, as IDF does.
//
// The search walks a list with its pxIndex (listGET_OWNER_OF_NEXT_ENTRY)
// from the end marker; a list walked in full without a pick is left with
// pxIndex on its first task, so a task readied into it before the next
// search goes ahead of that task, not to the tail (list.c vListInsertEnd
// inserts before pxIndex).
//
// A task in transit from another core (cpuState.outgoing) cannot run yet.
// With wait, pickNext returns nil when such a task is the one IDF would
// select, and changes nothing; without, it passes over it.
func (k *Kernel) pickNext(c int, wait bool) *TCB {
	top := false
	for prio := k.topReady; prio >= idlePriority; prio-- {
		l := k.ready[prio]
		if len(l) == 0 {
			continue
		}
		if !top {
			top, k.topReady = true, prio
		}
		k.readyIndex[prio] = nil
		for i, t := range l {
			if !canRunOn(t, c) || (t != k.cpu[c].cur && k.running(t)) {
				continue
			}
			if t.inTransit {
				if wait {
					return nil
				}
				continue
			}
			copy(l[i:], l[i+1:])
			l[len(l)-1] = t
			return t
		}
		k.readyIndex[prio] = l[0]
	}
	return k.cpu[c].idle
}

// addReady is prvAddTaskToReadyList: t goes to the tail of its priority's
// list, or before the task its pxIndex rests on (vListInsertEnd), and
// uxTopReadyPriority rises to it (taskRECORD_READY_PRIORITY).
func (k *Kernel) addReady(t *TCB) {
	l := k.ready[t.Priority]
	if x := k.readyIndex[t.Priority]; x != nil {
		k.ready[t.Priority] = slices.Insert(l, slices.Index(l, x), t)
	} else {
		k.ready[t.Priority] = append(l, t)
	}
	k.topReady = max(k.topReady, t.Priority)
}

// removeReady takes t off its ready list (uxListRemove of its state item,
// which moves a pxIndex resting on t back to the item before it).
func (k *Kernel) removeReady(t *TCB) {
	l := k.ready[t.Priority]
	i := slices.Index(l, t)
	if i < 0 {
		return
	}
	if k.readyIndex[t.Priority] == t {
		k.readyIndex[t.Priority] = nil // the end marker precedes the first task
		if i > 0 {
			k.readyIndex[t.Priority] = l[i-1]
		}
	}
	k.ready[t.Priority] = slices.Delete(l, i, i+1)
}

// onReadyList reports whether t is on a ready list: a ready or running task
// (IDF keeps the running task on its list).
func onReadyList(t *TCB) bool { return t.State == Ready || t.State == Running }

// switchContext is vTaskSwitchContext run from an ISR's exit (portYIELD_FROM_ISR):
// under xKernelLock, charge the outgoing task's run time and select the next
// task (pickNext, which may select the current one again); then save and
// restore contexts. The outgoing task stays on its ready list if it can
// still run. A selection that would take a task in transit from the other
// core is owed until that task can run (cpuState.selectOwed), if the
// current task can go on meanwhile.
func (k *Kernel) switchContext(p *sim.Proc, c int) {
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
	pc.yieldPending = false
	cur := pc.cur
	now := p.Now()
	cur.RunTime += now - pc.switchedIn
	pc.switchedIn = now
	next := k.pickNext(c, cur.State == Running)
	if next == nil {
		next, pc.selectOwed = cur, true
	}
	if next != cur {
		pc.selectOwed = false // a switch settles an owed selection
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
// its core switched away from becomes selectable (it stayed on its ready
// list if it is ready).
func (k *Kernel) finishSwitch(p *sim.Proc) {
	pc := &k.cpu[coreID(p)]
	t := pc.outgoing
	if t == nil {
		return
	}
	pc.outgoing = nil
	t.inTransit = false
	if t.State != Ready || t.Priority == idlePriority {
		return
	}
	if t.wokenInTransit {
		// It was woken during the switch, when its waker could not yet
		// tell a core to run it: ask now, as the waker's yield would have.
		t.wokenInTransit = false
		for c := range k.cpu {
			if canRunOn(t, c) && t.Priority > k.cpu[c].cur.Priority {
				k.raiseYield(c)
				k.SoC.IPIs++
				return
			}
		}
	}
	// A selection that waited for it runs again now (no crosscore
	// interrupt in IDF: that selection would have taken it).
	for c := range k.cpu {
		oc := &k.cpu[c]
		if oc.selectOwed && canRunOn(t, c) {
			oc.selectOwed = false
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

// makeReady files an unblocked task on its ready list (readyAgain) and
// decides who must yield (prvCheckForYield with xYieldEqualPriority
// pdFALSE): it returns true when the task outranks the
// one running on the calling core, and sends the other core a yield
// interrupt when the task may run there and outranks its current task. A
// task woken before its own core switched it out is its core's current task
// still; that core's pending switch selects among the ready tasks, itself
// included. Call it under xKernelLock.
func (k *Kernel) makeReady(p *sim.Proc, t *TCB) bool {
	if !k.readyAgain(t) {
		// A task in transit is seen to by finishSwitch, when it can run.
		t.wokenInTransit = t.inTransit
		return false
	}
	c := coreID(p)
	if canRunOn(t, c) && t.Priority > k.cpu[c].cur.Priority {
		k.cpu[c].yieldPending = true
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

// readyAgain files an unblocked task on its ready list (addReady). It
// reports whether the caller must decide who yields: not for a task that is
// still a core's current task (no core outranks it), nor for one in
// transit, whose switch asks once it completes (finishSwitch).
func (k *Kernel) readyAgain(t *TCB) bool {
	if t.delayed {
		k.removeDelayed(t)
	}
	k.addReady(t)
	switch {
	case k.running(t):
		t.State = Running
		return false
	case t.inTransit:
		t.State = Ready
		return false
	}
	t.State = Ready
	return true
}

// block is vTaskPlaceOnEventList + prvAddCurrentTaskToDelayedList for the
// calling task: onto the event list (if any) in priority order, and onto the
// delayed list when the wait has a timeout. Call it under xKernelLock, then
// yield once the critical sections are left.
func (k *Kernel) block(p *sim.Proc, t *TCB, l *EventList, ticks uint32, desc string) {
	k.work(p, k.cfg.BlockBody)
	k.removeReady(t)
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
	k.leaveEvent(p, t)
	return k.makeReady(p, t)
}

// unblockOnTick readies a task whose timeout the tick found expired. The
// tick asks no core to yield for it but its own (sysTickHandler), so a task
// in transit meanwhile is found by the ticks too, not by a yield.
func (k *Kernel) unblockOnTick(p *sim.Proc, t *TCB) {
	k.leaveEvent(p, t)
	k.readyAgain(t)
}

// leaveEvent takes a blocked task off the event list it waits on.
func (k *Kernel) leaveEvent(p *sim.Proc, t *TCB) {
	if t.event != nil {
		t.event.remove(t)
	}
	k.work(p, k.cfg.BlockBody)
	t.Proc.SetWaiting("", false)
}

// sysTickHandler is port_systick.c xPortSysTickHandler. Core 0 runs
// xTaskIncrementTick: the tick count and the timeouts, where a task it
// unblocks asks for a switch only on core 0 (if it may run there and its
// priority is at least that of core 0's task: no yield is sent to core 1,
// whose own tick finds it). Core 1 runs xTaskIncrementTickOtherCores, which
// asks for a switch when uxTopReadyPriority is above its task's priority.
// Both time-slice when the ready list of their task's priority holds more
// than one task, running tasks included, and switch when a yield is pending
// (xYieldPending); the switch then selects, and may keep the current task
// (CODE: esp-idf v5.1 components/freertos/FreeRTOS-Kernel/tasks.c,
// xTaskIncrementTick and xTaskIncrementTickOtherCores).
func (k *Kernel) sysTickHandler(p *sim.Proc, c int) {
	k.work(p, k.cfg.TickBody)
	k.enterCritical(p, k.KernelLock)
	cur := k.cpu[c].cur
	yield := false
	if c == 0 {
		k.tickCount++
		k.guardedStore(p, k.tickAddr, uint64(k.tickCount))
		for i := 0; i < len(k.delayed); {
			t := k.delayed[i]
			if int32(k.tickCount-t.wakeTick) >= 0 {
				t.timedOut = true
				k.unblockOnTick(p, t)
				if canRunOn(t, 0) && t.Priority >= cur.Priority {
					yield = true
				}
				continue // unblockOnTick removed it from k.delayed
			}
			i++
		}
	} else if k.topReady > cur.Priority {
		yield = true
	}
	if len(k.ready[cur.Priority]) > 1 {
		yield = true // configUSE_TIME_SLICING
	}
	if k.cpu[c].yieldPending {
		yield = true
	}
	k.exitCritical(p, k.KernelLock)
	if yield {
		k.switchContext(p, c)
	}
	k.flush(p)
}
