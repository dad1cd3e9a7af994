package esp32

import (
	"fmt"

	"synclab/sim"
)

// SemKind is the queue type of a semaphore (queueQUEUE_TYPE_*).
type SemKind uint8

// Semaphore kinds.
const (
	Mutex SemKind = iota
	RecursiveMutex
	Binary
	Counting
)

var kindNames = [...]string{"mutex", "recursive mutex", "binary semaphore", "counting semaphore"}

// String is the kind's name in reports and errors.
func (k SemKind) String() string { return kindNames[k] }

// QueueConfig holds the FreeRTOSConfig.h switches that change the size of
// a queue or semaphore (StaticQueue_t).
type QueueConfig struct {
	// QueueSets is configUSE_QUEUE_SETS: a pxQueueSetContainer pointer.
	QueueSets bool
	// TraceFacility is configUSE_TRACE_FACILITY: uxQueueNumber and
	// ucQueueType.
	TraceFacility bool
}

// IDFQueueConfig is ESP-IDF v5.1's configuration: FreeRTOSConfig.h sets
// configUSE_QUEUE_SETS 1, and configUSE_TRACE_FACILITY follows
// CONFIG_FREERTOS_USE_TRACE_FACILITY, default n (CODE: esp-idf v5.1
// components/freertos/esp_additions/include/freertos/FreeRTOSConfig.h and
// components/freertos/Kconfig; CONFIG_FREERTOS_GENERATE_RUN_TIME_STATS,
// which vTaskGetRunTimeStats needs, selects it).
var IDFQueueConfig = QueueConfig{QueueSets: true}

// StaticQueueBytes is sizeof(StaticQueue_t), the RAM of one queue,
// semaphore or mutex, laid out member by member as esp-idf v5.1's
// components/freertos/FreeRTOS-Kernel/include/freertos/FreeRTOS.h declares
// it, for the Xtensa ABI (pointers, UBaseType_t and TickType_t of 4 bytes,
// each member at its alignment, the size rounded to the largest one), with
// configSUPPORT_STATIC_ALLOCATION and configSUPPORT_DYNAMIC_ALLOCATION both 1
// and configUSE_LIST_DATA_INTEGRITY_CHECK_BYTES 0 (IDF's values).
func StaticQueueBytes(c QueueConfig) int { return queueLayout(c).size }

// queueOffsets are the offsets in StaticQueue_t of the members the model
// touches, and its size.
type queueOffsets struct {
	// sendWaiters and recvWaiters are the uxNumberOfItems of
	// xTasksWaitingToSend and xTasksWaitingToReceive (listLIST_IS_EMPTY
	// reads them), count is uxMessagesWaiting (a semaphore's count), lock
	// xQueueLock.
	sendWaiters, recvWaiters, count, lock, size int
}

// queueLayout lays out StaticQueue_t as StaticQueueBytes says.
func queueLayout(c QueueConfig) queueOffsets {
	var s cStruct
	var o queueOffsets
	s.add(4, 3*4) // void *pvDummy1[3]: pcHead, pcWriteTo and the first word of u
	s.add(4, 4)   // union u's second word
	// StaticList_t xDummy3[2], xTasksWaitingToSend then
	// xTasksWaitingToReceive: uxNumberOfItems, pxIndex and a mini list
	// item (xItemValue, pxNext, pxPrevious), 20 bytes each.
	o.sendWaiters = s.add(4, 4+4+3*4)
	o.recvWaiters = s.add(4, 4+4+3*4)
	o.count = s.add(4, 3*4) // UBaseType_t uxDummy4[3]: uxMessagesWaiting, uxLength, uxItemSize
	s.add(1, 2)             // uint8_t ucDummy5[2]: cRxLock, cTxLock
	s.add(1, 1)             // ucStaticallyAllocated
	if c.QueueSets {
		s.add(4, 4) // pxQueueSetContainer
	}
	if c.TraceFacility {
		s.add(4, 4) // uxQueueNumber
		s.add(1, 1) // ucQueueType
	}
	o.lock = s.add(4, portMuxBytes) // portMUX_TYPE xQueueLock
	o.size = s.bytes()
	return o
}

// cStruct lays out a C struct: members in order, each at a multiple of its
// alignment.
type cStruct struct{ size, align int }

// add appends a member and returns its offset.
func (s *cStruct) add(align, size int) (offset int) {
	offset = (s.size + align - 1) / align * align
	s.size = offset + size
	s.align = max(s.align, align)
	return offset
}

// bytes is sizeof: the size rounded up to the strictest member alignment.
func (s *cStruct) bytes() int { return (s.size + s.align - 1) / s.align * s.align }

// Semaphore is a FreeRTOS semaphore or mutex: a Queue_t with item size 0 whose
// uxMessagesWaiting is the count. Its fields the kernel touches are words in
// SRAM; the lists are Go state guarded by the model's locks.
type Semaphore struct {
	Name string
	Kind SemKind
	k    *Kernel
	// Lock is the object's xQueueLock.
	Lock *PortMux
	// Addr is the start of the Queue_t in SRAM, Bytes its size
	// (StaticQueueBytes).
	Addr  sim.Addr
	Bytes int
	// uxMessagesWaiting and the receive list's length (listLIST_IS_EMPTY).
	countAddr, waitersAddr sim.Addr
	max                    uint64
	holder                 *TCB // xMutexHolder
	recursion              int  // uxRecursiveCallCount
	waitRecv               EventList
	takeDesc               string
}

// NewSemaphore creates a semaphore: xSemaphoreCreateMutex (count 1),
// xSemaphoreCreateRecursiveMutex, xSemaphoreCreateBinary (empty) or
// xSemaphoreCreateCounting(max, initial). align places the Queue_t (and so
// its words) on that boundary, for the alignment experiment.
func (k *Kernel) NewSemaphore(name string, kind SemKind, maxCount, initial uint64, align uint64) (*Semaphore, error) {
	switch kind {
	case Mutex, RecursiveMutex:
		maxCount, initial = 1, 1
	case Binary:
		maxCount = 1
		if initial > 1 {
			return nil, fmt.Errorf("semaphore %q: binary initial count %d must be 0 or 1", name, initial)
		}
	case Counting:
		if maxCount == 0 || initial > maxCount {
			return nil, fmt.Errorf("semaphore %q: counting maxCount %d must be > 0 and initial %d <= maxCount", name, maxCount, initial)
		}
	default:
		return nil, fmt.Errorf("semaphore %q: unknown kind %d", name, kind)
	}
	o := queueLayout(IDFQueueConfig)
	a := k.SoC.Alloc(uint64(o.size), max(align, 8))
	s := &Semaphore{Name: name, Kind: kind, k: k, Addr: a, Bytes: o.size, max: maxCount,
		countAddr: memberWord(a, o.count), waitersAddr: memberWord(a, o.recvWaiters),
		waitRecv: EventList{Name: name}, takeDesc: fmt.Sprintf("take %s %q", kind, name)}
	s.Lock = k.portMuxAt(name+".xQueueLock", memberWord(a, o.lock))
	k.SoC.Mem.Poke(s.countAddr, initial)
	k.sems = append(k.sems, s)
	return s, nil
}

// memberWord is the simulated 8-byte word in which the member at offset of
// the structure at a starts.
func memberWord(a sim.Addr, offset int) sim.Addr { return a + sim.Addr(offset)&^7 }

// Count returns uxSemaphoreGetCount without simulating an access.
func (s *Semaphore) Count() uint64 { return s.k.SoC.Mem.Peek(s.countAddr) }

// Holder returns the mutex holder, or nil.
func (s *Semaphore) Holder() *TCB { return s.holder }

// Waiters returns the tasks blocked in a take, in wake order.
func (s *Semaphore) Waiters() []*TCB { return append([]*TCB(nil), s.waitRecv.tasks...) }

func (s *Semaphore) isMutex() bool { return s.Kind == Mutex || s.Kind == RecursiveMutex }

// xQueueSemaphoreTake takes s for the calling task t, blocking up to ticks
// (PortMaxDelay: forever); it reports whether it got the semaphore. Its shape
// is IDF v5.1's queue.c for two cores, where queueUSE_LOCKS is 0: one
// critical section on xQueueLock per round takes if it can, else checks the
// timeout, applies priority inheritance, blocks (each nesting xKernelLock)
// and asks for a yield, which is taken when the section ends; the task then
// starts another round (CODE: esp-idf v5.1
// components/freertos/FreeRTOS-Kernel/queue.c, xQueueSemaphoreTake, `#if (
// queueUSE_LOCKS == 0 )`; v5.0 had vanilla FreeRTOS's second section with
// the queue locked).
func (k *Kernel) xQueueSemaphoreTake(t *TCB, s *Semaphore, ticks uint32) bool {
	p := t.Proc
	w := blockTime{ticks: ticks}
	inherited := false
	// Each round starts at a loop head (sim.Proc.Loop), with what it
	// carries declared at the end of the previous one.
	for range p.Loop(-1) {
		k.enterCritical(p, s.Lock)
		if n := k.guardedLoad(p, s.countAddr); n > 0 {
			k.work(p, k.cfg.TakeBody)
			k.guardedStore(p, s.countAddr, n-1)
			if s.isMutex() {
				s.holder = k.pvTaskIncrementMutexHeldCount(p, t)
			}
			// Nobody blocks on giving a semaphore: xTasksWaitingToSend stays empty.
			k.exitCritical(p, s.Lock)
			return true
		}
		if k.giveUp(t, &w) {
			// No wait, or timed out, the count still 0 under the same lock.
			if inherited {
				k.enterCritical(p, k.KernelLock)
				k.vTaskPriorityDisinheritAfterTimeout(p, s)
				k.exitCritical(p, k.KernelLock)
			}
			k.exitCritical(p, s.Lock)
			return false
		}
		if s.isMutex() {
			k.enterCritical(p, k.KernelLock) // xTaskPriorityInherit's own, whatever the holder
			inherited = k.xTaskPriorityInherit(p, t, s.holder) || inherited
			k.exitCritical(p, k.KernelLock)
		}
		k.enterCritical(p, k.KernelLock) // vTaskPlaceOnEventList
		k.block(p, t, &s.waitRecv, w.left(k), s.takeDesc)
		k.guardedStore(p, s.waitersAddr, uint64(s.waitRecv.Len()))
		k.exitCritical(p, k.KernelLock)
		k.yieldWithinAPI(p) // pending until the exit below
		k.exitCritical(p, s.Lock)
		p.Carry(uint64(w.deadline), b2u(w.set), b2u(inherited))
	}
	panic("unreachable")
}

// blockTime is the xTicksToWait of a blocking queue call and its xTimeOut:
// the tick it ends at, once set.
type blockTime struct {
	ticks, deadline uint32
	set             bool
}

// giveUp is what a queue call does when it finds it cannot go on, under
// the object's lock: with no time to wait it gives up at once; else it
// starts the timeout on its first round (vTaskInternalSetTimeOutState) and
// gives up when xTaskCheckForTimeOut says it expired.
func (k *Kernel) giveUp(t *TCB, w *blockTime) bool {
	if w.ticks == 0 {
		return true
	}
	if !w.set {
		k.vTaskInternalSetTimeOutState(t.Proc)
		w.deadline, w.set = k.tickCount+w.ticks, true
		t.timedOut = false
	}
	return k.xTaskCheckForTimeOut(t.Proc, t, w.ticks, w.deadline)
}

// left is the xTicksToWait left to block for.
func (w *blockTime) left(k *Kernel) uint32 {
	if w.ticks == PortMaxDelay {
		return PortMaxDelay
	}
	return w.deadline - k.tickCount
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// xTaskCheckForTimeOut reports whether the wait that began with deadline has
// expired. IDF takes xKernelLock first, whatever the timeout: the
// portMAX_DELAY test is inside the critical section; a wait that goes on
// re-arms its timeout state (vTaskInternalSetTimeOutState, nesting the
// lock) (CODE: esp-idf v5.x components/freertos/FreeRTOS-Kernel/tasks.c,
// xTaskCheckForTimeOut: taskENTER_CRITICAL( &xKernelLock ) before
// `if( *pxTicksToWait == portMAX_DELAY )`).
func (k *Kernel) xTaskCheckForTimeOut(p *sim.Proc, t *TCB, ticks, deadline uint32) bool {
	k.enterCritical(p, k.KernelLock)
	expired := false
	if ticks != PortMaxDelay {
		expired = t.timedOut || int32(k.tickCount-deadline) >= 0
		if !expired {
			k.vTaskInternalSetTimeOutState(p)
		}
	}
	k.exitCritical(p, k.KernelLock)
	return expired
}

// vTaskInternalSetTimeOutState records the tick count and overflow count a
// wait starts from. On SMP IDF wraps the two stores in xKernelLock, so a
// tick on the other core cannot split them (CODE: esp-idf v5.x tasks.c,
// vTaskInternalSetTimeOutState, `#if ( configNUM_CORES > 1 )
// taskENTER_CRITICAL( &xKernelLock )`). The model keeps the deadline in Go;
// this charges the lock.
func (k *Kernel) vTaskInternalSetTimeOutState(p *sim.Proc) {
	k.enterCritical(p, k.KernelLock)
	k.exitCritical(p, k.KernelLock)
}

// pvTaskIncrementMutexHeldCount counts the mutex against the taking task and
// returns it as the holder. IDF wraps it in xKernelLock because it reads
// pxCurrentTCB of the own core (tasks.c, IDF v5.x).
func (k *Kernel) pvTaskIncrementMutexHeldCount(p *sim.Proc, t *TCB) *TCB {
	k.enterCritical(p, k.KernelLock)
	t.MutexesHeld++
	k.exitCritical(p, k.KernelLock)
	return t
}

// xTaskPriorityInherit raises the holder to the waiter's priority when it is
// lower, moving it between ready lists if it is ready. Call under xKernelLock.
// It reports whether the waiter has a priority the holder inherits: a holder
// already at or above it must have inherited when its base priority is lower
// (tasks.c xTaskPriorityInherit returns pdTRUE then), so that this waiter's
// timeout, too, runs vTaskPriorityDisinheritAfterTimeout.
func (k *Kernel) xTaskPriorityInherit(p *sim.Proc, waiter, holder *TCB) bool {
	if holder == nil {
		return false
	}
	if holder.Priority >= waiter.Priority {
		return holder.BasePriority < waiter.Priority
	}
	k.setPriority(holder, waiter.Priority)
	return true
}

func (k *Kernel) setPriority(t *TCB, prio int) {
	if !onReadyList(t) { // a running holder is on one: IDF keeps it there
		// A holder blocked on another object keeps its place in that
		// object's event list: tasks.c changes only its event item's
		// value, which orders later insertions, and does not re-sort the
		// list (xTaskPriorityInherit, vTaskPriorityDisinheritAfterTimeout).
		t.Priority = prio
		return
	}
	k.removeReady(t)
	t.Priority = prio
	k.addReady(t)
}

// xTaskPriorityDisinherit drops the giving holder back to its base priority
// once it holds no other mutex; it reports whether the holder should yield.
// Call under xKernelLock.
func (k *Kernel) xTaskPriorityDisinherit(p *sim.Proc, holder *TCB) bool {
	if holder == nil {
		return false
	}
	holder.MutexesHeld--
	if holder.Priority != holder.BasePriority && holder.MutexesHeld == 0 {
		k.setPriority(holder, holder.BasePriority)
		return true
	}
	return false
}

// vTaskPriorityDisinheritAfterTimeout lowers the holder to the highest of its
// base priority and the remaining waiters' priorities when an inheriting
// waiter gives up.
func (k *Kernel) vTaskPriorityDisinheritAfterTimeout(p *sim.Proc, s *Semaphore) {
	h := s.holder
	if h == nil {
		return
	}
	prio := h.BasePriority
	if w := s.waitRecv.tasks; len(w) > 0 && w[0].Priority > prio {
		prio = w[0].Priority
	}
	if h.Priority != prio && h.MutexesHeld == 1 {
		k.setPriority(h, prio)
	}
}

// xQueueGenericSend gives s (xSemaphoreGive): under xQueueLock, a mutex
// disinherits its holder, the count rises and the highest-priority waiter is
// unblocked; a yield follows when a woken task outranks the caller. It
// reports false when the semaphore is full or a mutex is given by a task that
// does not hold it.
func (k *Kernel) xQueueGenericSend(t *TCB, s *Semaphore) bool {
	p := t.Proc
	k.enterCritical(p, s.Lock)
	n := k.guardedLoad(p, s.countAddr)
	if n >= s.max || (s.isMutex() && s.holder != t) {
		k.exitCritical(p, s.Lock)
		return false
	}
	if k.giveLocked(p, s, n) {
		k.yieldWithinAPI(p) // queueYIELD_IF_USING_PREEMPTION, taken at the exit
	}
	k.exitCritical(p, s.Lock)
	return true
}

// giveLocked is the body of a give that found room, count n, under s's
// xQueueLock, from a task or an ISR: a mutex disinherits its holder
// (prvCopyDataToQueue), the count rises and the highest-priority waiter is
// unblocked. It reports whether the calling core should yield.
func (k *Kernel) giveLocked(p *sim.Proc, s *Semaphore, n uint64) bool {
	yield := false
	k.work(p, k.cfg.GiveBody)
	if s.isMutex() {
		k.enterCritical(p, k.KernelLock)
		yield = k.xTaskPriorityDisinherit(p, s.holder)
		k.exitCritical(p, k.KernelLock)
		s.holder = nil
	}
	k.guardedStore(p, s.countAddr, n+1)
	if k.guardedLoad(p, s.waitersAddr) != 0 {
		k.enterCritical(p, k.KernelLock)
		if k.xTaskRemoveFromEventList(p, &s.waitRecv) {
			yield = true
		}
		k.guardedStore(p, s.waitersAddr, uint64(s.waitRecv.Len()))
		k.exitCritical(p, k.KernelLock)
	}
	return yield
}

// xTaskRemoveFromEventList unblocks the head of l (highest priority, first
// come among equals) and reports whether the calling core must yield.
func (k *Kernel) xTaskRemoveFromEventList(p *sim.Proc, l *EventList) bool {
	if len(l.tasks) == 0 {
		return false
	}
	return k.unblock(p, l.tasks[0])
}

// xSemaphoreGiveFromISR gives s from an interrupt handler running on p: no
// yield here, but *woken reports whether the handler should end with
// portYIELD_FROM_ISR (a woken task outranks the interrupted one). Mutexes
// cannot be given from an ISR.
func (k *Kernel) xSemaphoreGiveFromISR(p *sim.Proc, s *Semaphore) (ok, woken bool) {
	if s.isMutex() {
		p.Fail(fmt.Errorf("xSemaphoreGiveFromISR on %s %q: mutexes cannot be given from an ISR", s.Kind, s.Name))
		return false, false
	}
	k.enterCritical(p, s.Lock) // taskENTER_CRITICAL_ISR: same spinlock
	n := k.guardedLoad(p, s.countAddr)
	if n >= s.max {
		k.exitCritical(p, s.Lock)
		return false, false
	}
	woken = k.giveLocked(p, s, n)
	k.exitCritical(p, s.Lock)
	return true, woken
}

// ---- the API as application code calls it ----------------------------------

// SemaphoreTake is xSemaphoreTake(s, ticks) by the calling task.
func (t *TCB) SemaphoreTake(s *Semaphore, ticks uint32) bool {
	if s.Kind == RecursiveMutex {
		t.Proc.Fail(fmt.Errorf("xSemaphoreTake on recursive mutex %q: use xSemaphoreTakeRecursive", s.Name))
		return false
	}
	return t.k.xQueueSemaphoreTake(t, s, ticks)
}

// SemaphoreGive is xSemaphoreGive(s) by the calling task.
func (t *TCB) SemaphoreGive(s *Semaphore) bool { return t.k.xQueueGenericSend(t, s) }

// SemaphoreTakeRecursive is xSemaphoreTakeRecursive: a holder takes again by
// counting; others take the underlying mutex.
func (t *TCB) SemaphoreTakeRecursive(s *Semaphore, ticks uint32) bool {
	if s.holder == t {
		s.recursion++
		return true
	}
	if t.k.xQueueSemaphoreTake(t, s, ticks) {
		s.recursion = 1
		return true
	}
	return false
}

// SemaphoreGiveRecursive is xSemaphoreGiveRecursive: the mutex is given back
// when the holder's count reaches zero.
func (t *TCB) SemaphoreGiveRecursive(s *Semaphore) bool {
	if s.holder != t {
		return false
	}
	s.recursion--
	if s.recursion == 0 {
		return t.k.xQueueGenericSend(t, s)
	}
	return true
}

// SemaphoreGiveFromISR is xSemaphoreGiveFromISR, for handlers (see
// Kernel.OnPeripheral): p is the interrupted process.
func (k *Kernel) SemaphoreGiveFromISR(p *sim.Proc, s *Semaphore) (ok, higherPriorityTaskWoken bool) {
	return k.xSemaphoreGiveFromISR(p, s)
}

// YieldFromISR is portYIELD_FROM_ISR(woken) at the end of a handler on p.
func (k *Kernel) YieldFromISR(p *sim.Proc, woken bool) {
	if woken {
		k.switchContext(p, coreID(p))
	}
}
