package esp32

import (
	"fmt"

	"synclab/sim"
)

// Queue is a FreeRTOS message queue (xQueueCreate): Length items of ItemSize
// bytes each, copied in on a send and out on a receive, with the tasks
// blocked on a full queue (xTasksWaitingToSend) and on an empty one
// (xTasksWaitingToReceive). An item's value is a uint64 (its first 8 bytes);
// a send and a receive each copy all ItemSize bytes, which is what they cost.
type Queue struct {
	Name             string
	Length, ItemSize int
	// Lock is the queue's xQueueLock.
	Lock *PortMux
	// Addr is the start of the Queue_t, which its storage area follows in
	// one allocation (xQueueGenericCreate); Bytes is their size.
	Addr  sim.Addr
	Bytes int
	k     *Kernel
	// The storage area's items, oldest first from head: Go state guarded
	// by Lock, each access charged as an SRAM word access (guarded).
	items              []uint64
	head, n            int
	waitSend, waitRecv EventList
	sendDesc, recvDesc string
}

// NewQueue creates a queue of length items of itemSize bytes
// (xQueueCreate(length, itemSize)) in internal SRAM.
func (k *Kernel) NewQueue(name string, length, itemSize int) (*Queue, error) {
	return k.newQueue(name, length, itemSize, 8)
}

// newQueue is NewQueue with the allocation (the Queue_t, then its storage
// area) aligned to align bytes.
func (k *Kernel) newQueue(name string, length, itemSize int, align uint64) (*Queue, error) {
	if length < 1 {
		return nil, fmt.Errorf("queue %q: length = %d: want at least 1 item", name, length)
	}
	if itemSize < 1 {
		return nil, fmt.Errorf("queue %q: item size = %d bytes: want at least 1 (a queue of size-0 items is a semaphore: NewSemaphore)", name, itemSize)
	}
	o := queueLayout(IDFQueueConfig)
	free := k.SoC.SRAMFree()
	bytes := uint64(o.size) + uint64(length)*uint64(itemSize)
	if uint64(length) > free || uint64(itemSize) > free || bytes > free { // the first two: no overflow
		return nil, fmt.Errorf("queue %q: %d items of %d bytes need %d bytes with the Queue_t; %d bytes of SRAM are left", name, length, itemSize, bytes, free)
	}
	a := k.SoC.Alloc(bytes, align)
	q := &Queue{Name: name, Length: length, ItemSize: itemSize, Addr: a, Bytes: int(bytes), k: k,
		items: make([]uint64, length), waitSend: EventList{Name: name}, waitRecv: EventList{Name: name},
		sendDesc: fmt.Sprintf("send to full queue %q", name), recvDesc: fmt.Sprintf("receive from empty queue %q", name)}
	q.Lock = k.portMuxAt(name+".xQueueLock", memberWord(a, o.lock))
	k.queues = append(k.queues, q)
	return q, nil
}

// MessagesWaiting returns uxQueueMessagesWaiting without simulating an
// access.
func (q *Queue) MessagesWaiting() int { return q.n }

// copyWords is how many 32-bit words memcpy moves for one item. The model
// takes it to move aligned data a word at a time (Xtensa l32i and s32i),
// each word one load and one store, and charges no loop overhead.
func (q *Queue) copyWords() int64 { return int64(q.ItemSize+3) / 4 }

// xQueueSendToBack sends v to the back of q for the calling task t,
// blocking up to ticks (PortMaxDelay: forever) while q is full; it reports
// whether v was sent. Its shape is IDF v5.1's queue.c for two cores, where
// queueUSE_LOCKS is 0, as xQueueSemaphoreTake's is: one critical section on
// xQueueLock per round sends if there is room (unblocking the first waiting
// receiver), else checks the timeout and blocks on xTasksWaitingToSend; the
// task starts another round once woken (CODE: esp-idf v5.1
// components/freertos/FreeRTOS-Kernel/queue.c, xQueueGenericSend).
func (k *Kernel) xQueueSendToBack(t *TCB, q *Queue, v uint64, ticks uint32) bool {
	return k.queueRounds(t, q, ticks, &q.waitSend, q.sendDesc, func(p *sim.Proc) (bool, bool) {
		return q.trySend(p, v)
	})
}

// trySend sends v to the back of q if there is room, under q's xQueueLock:
// it reports whether it did and whether the calling core should yield.
func (q *Queue) trySend(p *sim.Proc, v uint64) (ok, yield bool) {
	q.k.guarded(p, 1) // uxMessagesWaiting < uxLength
	if q.n == q.Length {
		return false, false
	}
	return true, q.sendLocked(p, v, false)
}

// xQueueOverwrite puts v in q, a queue of one item, replacing the item if
// there is one, so it never blocks (queue.c: xQueueGenericSend with
// queueOVERWRITE, whose configASSERT wants uxLength 1): the mailbox pattern.
func (k *Kernel) xQueueOverwrite(t *TCB, q *Queue, v uint64) {
	if q.Length != 1 {
		t.Proc.Fail(fmt.Errorf("xQueueOverwrite on queue %q of length %d: only a queue of one item can be overwritten", q.Name, q.Length))
	}
	k.queueRounds(t, q, 0, &q.waitSend, q.sendDesc, func(p *sim.Proc) (bool, bool) {
		k.guarded(p, 1) // uxMessagesWaiting
		return true, q.sendLocked(p, v, true)
	})
}

// sendLocked is prvCopyDataToQueue and the wake-up of the first waiting
// receiver, under q's xQueueLock, from a task or an ISR: it reports whether
// the calling core should yield. With overwrite, v replaces the oldest item
// if there is one. Its body costs sem_give_body_cycles, the same function's
// path for xSemaphoreGive, besides the copy's accesses.
func (q *Queue) sendLocked(p *sim.Proc, v uint64, overwrite bool) bool {
	k := q.k
	k.work(p, k.cfg.GiveBody)
	k.guarded(p, 3+2*q.copyWords()) // the write position read and moved; memcpy; uxMessagesWaiting stored
	if overwrite && q.n > 0 {
		q.items[q.head] = v
	} else {
		q.put(v)
	}
	return k.wakeFirst(p, &q.waitRecv)
}

// put stores v behind q's items; the caller has checked there is room.
func (q *Queue) put(v uint64) {
	q.items[(q.head+q.n)%q.Length] = v
	q.n++
}

// xQueueReceive takes the oldest item of q for the calling task t, blocking
// up to ticks while q is empty; it reports the item and whether there was
// one. The same rounds as xQueueSendToBack, with the two event lists'
// roles swapped (queue.c, xQueueReceive).
func (k *Kernel) xQueueReceive(t *TCB, q *Queue, ticks uint32) (uint64, bool) {
	return k.receive(t, q, ticks, true)
}

// xQueuePeek reads the oldest item of q for the calling task t without
// taking it, blocking up to ticks while q is empty. The item stays, so the
// first other task waiting to receive is woken too (queue.c, xQueuePeek).
func (k *Kernel) xQueuePeek(t *TCB, q *Queue, ticks uint32) (uint64, bool) {
	return k.receive(t, q, ticks, false)
}

// receive is xQueueReceive, or xQueuePeek when take is false. Its body costs
// sem_take_body_cycles, xQueueSemaphoreTake's path besides the copy.
func (k *Kernel) receive(t *TCB, q *Queue, ticks uint32, take bool) (uint64, bool) {
	var v uint64
	ok := k.queueRounds(t, q, ticks, &q.waitRecv, q.recvDesc, func(p *sim.Proc) (bool, bool) {
		k.guarded(p, 1) // uxMessagesWaiting > 0
		if q.n == 0 {
			return false, false
		}
		k.work(p, k.cfg.TakeBody)
		// pcReadFrom advanced (a peek saves and restores it); memcpy;
		// uxMessagesWaiting stored (a peek: its saved position).
		k.guarded(p, 3+2*q.copyWords())
		v = q.items[q.head]
		if !take {
			return true, k.wakeFirst(p, &q.waitRecv)
		}
		q.head = (q.head + 1) % q.Length
		q.n--
		return true, k.wakeFirst(p, &q.waitSend)
	})
	return v, ok
}

// queueRounds runs the rounds of a blocking send or receive on q by t: each,
// under xQueueLock, tries it (try reports whether it succeeded and whether
// the wake-up it made needs a yield), or gives up when ticks is 0 or the wait
// has timed out, or blocks t on wait (described as desc to deadlock reports)
// and yields once the section ends.
func (k *Kernel) queueRounds(t *TCB, q *Queue, ticks uint32, wait *EventList, desc string, try func(p *sim.Proc) (ok, yield bool)) bool {
	p := t.Proc
	w := blockTime{ticks: ticks}
	for range p.Loop(-1) {
		k.enterCritical(p, q.Lock)
		if ok, yield := try(p); ok {
			if yield {
				k.yieldWithinAPI(p) // queueYIELD_IF_USING_PREEMPTION, taken at the exit
			}
			k.exitCritical(p, q.Lock)
			return true
		}
		if k.giveUp(t, &w) {
			k.exitCritical(p, q.Lock)
			return false
		}
		k.enterCritical(p, k.KernelLock) // vTaskPlaceOnEventList
		k.block(p, t, wait, w.left(k), desc)
		k.guarded(p, 1) // the list's uxNumberOfItems
		k.exitCritical(p, k.KernelLock)
		k.yieldWithinAPI(p) // pending until the exit below
		k.exitCritical(p, q.Lock)
		p.Carry(uint64(w.deadline), b2u(w.set))
	}
	panic("unreachable")
}

// wakeFirst is the wake-up after a send or receive: when listLIST_IS_EMPTY
// finds tasks on l, xTaskRemoveFromEventList unblocks the first under
// xKernelLock. It reports whether the calling core should yield.
func (k *Kernel) wakeFirst(p *sim.Proc, l *EventList) bool {
	k.guarded(p, 1) // listLIST_IS_EMPTY
	if l.Len() == 0 {
		return false
	}
	k.enterCritical(p, k.KernelLock)
	yield := k.xTaskRemoveFromEventList(p, l)
	k.guarded(p, 1) // the list's uxNumberOfItems
	k.exitCritical(p, k.KernelLock)
	return yield
}

// xQueueSendFromISR sends v to the back of q from an interrupt handler
// running on p, never blocking: it reports whether there was room, and
// whether a task it woke outranks the interrupted one (the handler should
// then end with portYIELD_FROM_ISR) (queue.c, xQueueGenericSendFromISR:
// taskENTER_CRITICAL_ISR on xQueueLock).
func (k *Kernel) xQueueSendFromISR(p *sim.Proc, q *Queue, v uint64) (ok, woken bool) {
	k.enterCritical(p, q.Lock)
	ok, woken = q.trySend(p, v)
	k.exitCritical(p, q.Lock)
	return ok, woken
}

// QueueSend is xQueueSend(q, &v, ticks) (xQueueSendToBack) by the calling
// task.
func (t *TCB) QueueSend(q *Queue, v uint64, ticks uint32) bool {
	return t.k.xQueueSendToBack(t, q, v, ticks)
}

// QueueReceive is xQueueReceive(q, &v, ticks) by the calling task.
func (t *TCB) QueueReceive(q *Queue, ticks uint32) (v uint64, ok bool) {
	return t.k.xQueueReceive(t, q, ticks)
}

// QueueOverwrite is xQueueOverwrite(q, &v) by the calling task: q must hold
// one item.
func (t *TCB) QueueOverwrite(q *Queue, v uint64) { t.k.xQueueOverwrite(t, q, v) }

// QueuePeek is xQueuePeek(q, &v, ticks) by the calling task.
func (t *TCB) QueuePeek(q *Queue, ticks uint32) (v uint64, ok bool) {
	return t.k.xQueuePeek(t, q, ticks)
}

// QueueSendFromISR is xQueueSendFromISR, for handlers (see
// Kernel.OnPeripheral): p is the interrupted process.
func (k *Kernel) QueueSendFromISR(p *sim.Proc, q *Queue, v uint64) (ok, higherPriorityTaskWoken bool) {
	return k.xQueueSendFromISR(p, q, v)
}

// snapshot records the queue's items, oldest first, and its waiting tasks
// for fast-forward. Where the items sit in the storage area changes nothing
// the model does, so a full queue's steady state repeats with every item,
// not every Length items.
func (q *Queue) snapshot(s *sim.Snapshot) {
	s.Key(uint64(q.n))
	for i := range q.n {
		s.Key(q.items[(q.head+i)%q.Length])
	}
	for _, l := range []*EventList{&q.waitSend, &q.waitRecv} {
		s.Key(uint64(l.Len()))
		for _, t := range l.tasks {
			sim.Ident(s, t)
		}
	}
}
