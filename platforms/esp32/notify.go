package esp32

import (
	"fmt"
	"iter"

	"synclab/sim"
)

// NotifyAction is eNotifyAction.
type NotifyAction uint8

// Notify actions.
const (
	NoAction NotifyAction = iota
	SetBits
	Increment
	SetValueWithOverwrite
	SetValueWithoutOverwrite
)

// NotifyStateBytes is the notification state one index adds to a TCB:
// ulNotifiedValue (4 bytes) and ucNotifyState (1 byte) (tasks.c TCB_t).
const NotifyStateBytes = 5

func (k *Kernel) checkIndex(p *sim.Proc, idx int) bool {
	if idx < 0 || idx >= k.cfg.NotifyEntries {
		p.Fail(fmt.Errorf("notification index %d out of range [0, %d) (configTASK_NOTIFICATION_ARRAY_ENTRIES)", idx, k.cfg.NotifyEntries))
		return false
	}
	return true
}

// ulTaskGenericNotifyTake is ulTaskNotifyTakeIndexed for the calling task:
// under xKernelLock, if the value is zero, mark the task waiting and block up
// to ticks; then, in a second xKernelLock section, read the value and clear
// it (clear) or decrement it. It returns the value before that.
func (k *Kernel) ulTaskGenericNotifyTake(t *TCB, idx int, clear bool, ticks uint32) uint32 {
	p := t.Proc
	if !k.checkIndex(p, idx) {
		return 0
	}
	va, sa := t.valueAddr(idx), t.stateAddr(idx)
	k.enterCritical(p, k.KernelLock)
	k.work(p, k.cfg.NotifyBody)
	wait := k.guardedLoad(p, va) == 0
	if wait {
		k.guardedStore(p, sa, waitingNotification)
	}
	k.notifyBlock(p, t, wait, ticks, "notification take")
	v := k.guardedLoad(p, va)
	if v != 0 {
		if clear {
			k.guardedStore(p, va, 0)
		} else {
			k.guardedStore(p, va, v-1)
		}
	}
	k.guardedStore(p, sa, notWaitingNotification)
	k.exitCritical(p, k.KernelLock)
	return uint32(v)
}

// notifyBlock is the part ulTaskGenericNotifyTake and xTaskGenericNotifyWait
// share between their two xKernelLock sections (tasks.c): called in the
// first with the slot marked waiting when wait, it blocks the task up to
// ticks (not at all for 0) and asks for the yield inside the section
// (portYIELD_WITHIN_API, taken when it ends), leaves xKernelLock, and
// enters it again for the second section once the task runs (notified or
// timed out).
func (k *Kernel) notifyBlock(p *sim.Proc, t *TCB, wait bool, ticks uint32, desc string) {
	if wait && ticks > 0 {
		k.block(p, t, nil, ticks, desc)
		k.yieldWithinAPI(p)
	}
	k.exitCritical(p, k.KernelLock)
	k.enterCritical(p, k.KernelLock)
}

// xTaskGenericNotifyWait is xTaskNotifyWaitIndexed: clear bits on entry,
// wait for a notification up to ticks, clear bits on exit; it reports whether
// a notification arrived and the value before the exit clear.
func (k *Kernel) xTaskGenericNotifyWait(t *TCB, idx int, clearOnEntry, clearOnExit uint32, ticks uint32) (bool, uint32) {
	p := t.Proc
	if !k.checkIndex(p, idx) {
		return false, 0
	}
	va, sa := t.valueAddr(idx), t.stateAddr(idx)
	k.enterCritical(p, k.KernelLock)
	k.work(p, k.cfg.NotifyBody)
	wait := k.guardedLoad(p, sa) != notificationReceived
	if wait {
		v := k.guardedLoad(p, va)
		k.guardedStore(p, va, v&^uint64(clearOnEntry))
		k.guardedStore(p, sa, waitingNotification)
	}
	k.notifyBlock(p, t, wait, ticks, "notification wait")
	v := k.guardedLoad(p, va)
	got := k.guardedLoad(p, sa) == notificationReceived
	if got {
		k.guardedStore(p, va, v&^uint64(clearOnExit))
	}
	k.guardedStore(p, sa, notWaitingNotification)
	k.exitCritical(p, k.KernelLock)
	return got, uint32(v)
}

// notifyLocked applies action to target's slot idx and unblocks it if it was
// waiting. It returns whether the notification was applied (SetValueWithoutOverwrite
// fails on a pending one), the previous value, and whether the calling core
// should yield. Call under xKernelLock.
func (k *Kernel) notifyLocked(p *sim.Proc, target *TCB, idx int, value uint32, action NotifyAction) (ok bool, prev uint32, yield bool) {
	va, sa := target.valueAddr(idx), target.stateAddr(idx)
	k.work(p, k.cfg.NotifyBody)
	old := k.guardedLoad(p, sa)
	k.guardedStore(p, sa, notificationReceived)
	v := k.guardedLoad(p, va)
	prev, ok = uint32(v), true
	switch action {
	case SetBits:
		k.guardedStore(p, va, v|uint64(value))
	case Increment:
		k.guardedStore(p, va, uint64(uint32(v)+1))
	case SetValueWithOverwrite:
		k.guardedStore(p, va, uint64(value))
	case SetValueWithoutOverwrite:
		if old == notificationReceived {
			ok = false
		} else {
			k.guardedStore(p, va, uint64(value))
		}
	case NoAction:
	}
	if old == waitingNotification && target.State == Blocked {
		yield = k.unblock(p, target)
	}
	return ok, prev, yield
}

// xTaskGenericNotify is xTaskNotifyIndexed / xTaskNotifyGiveIndexed from a task.
func (k *Kernel) xTaskGenericNotify(t, target *TCB, idx int, value uint32, action NotifyAction) (bool, uint32) {
	p := t.Proc
	if !k.checkIndex(p, idx) {
		return false, 0
	}
	k.enterCritical(p, k.KernelLock)
	ok, prev, yield := k.notifyLocked(p, target, idx, value, action)
	if yield {
		k.yieldWithinAPI(p) // taskYIELD_IF_USING_PREEMPTION, taken at the exit
	}
	k.exitCritical(p, k.KernelLock)
	return ok, prev
}

// xTaskGenericNotifyFromISR is xTaskNotifyIndexedFromISR /
// vTaskNotifyGiveIndexedFromISR from a handler running on p: it uses
// taskENTER_CRITICAL_ISR on xKernelLock, and reports in woken whether the
// handler should end with portYIELD_FROM_ISR.
func (k *Kernel) xTaskGenericNotifyFromISR(p *sim.Proc, target *TCB, idx int, value uint32, action NotifyAction) (ok, woken bool) {
	if !k.checkIndex(p, idx) {
		return false, false
	}
	k.enterCritical(p, k.KernelLock)
	ok, _, woken = k.notifyLocked(p, target, idx, value, action)
	k.exitCritical(p, k.KernelLock)
	return ok, woken
}

// ---- the API as application code calls it ----------------------------------

// NotifyTake is ulTaskNotifyTakeIndexed(idx, clear, ticks) by the calling task.
func (t *TCB) NotifyTake(idx int, clear bool, ticks uint32) uint32 {
	return t.k.ulTaskGenericNotifyTake(t, idx, clear, ticks)
}

// NotifyWait is xTaskNotifyWaitIndexed by the calling task.
func (t *TCB) NotifyWait(idx int, clearOnEntry, clearOnExit, ticks uint32) (bool, uint32) {
	return t.k.xTaskGenericNotifyWait(t, idx, clearOnEntry, clearOnExit, ticks)
}

// NotifyGive is xTaskNotifyGiveIndexed(target, idx) by the calling task.
func (t *TCB) NotifyGive(target *TCB, idx int) {
	t.k.xTaskGenericNotify(t, target, idx, 0, Increment)
}

// Notify is xTaskNotifyIndexed(target, idx, value, action); it returns pdPASS
// (false only for SetValueWithoutOverwrite on a pending notification).
func (t *TCB) Notify(target *TCB, idx int, value uint32, action NotifyAction) bool {
	ok, _ := t.k.xTaskGenericNotify(t, target, idx, value, action)
	return ok
}

// NotifyGiveFromISR is vTaskNotifyGiveIndexedFromISR from a handler on p.
func (k *Kernel) NotifyGiveFromISR(p *sim.Proc, target *TCB, idx int) (higherPriorityTaskWoken bool) {
	_, woken := k.xTaskGenericNotifyFromISR(p, target, idx, 0, Increment)
	return woken
}

// NotifyFromISR is xTaskNotifyIndexedFromISR from a handler on p.
func (k *Kernel) NotifyFromISR(p *sim.Proc, target *TCB, idx int, value uint32, action NotifyAction) (ok, higherPriorityTaskWoken bool) {
	return k.xTaskGenericNotifyFromISR(p, target, idx, value, action)
}

// NotifyValue returns ulNotifiedValue[idx] without simulating an access.
func (t *TCB) NotifyValue(idx int) uint32 { return uint32(t.k.SoC.Mem.Peek(t.valueAddr(idx))) }

// EnterCritical is portENTER_CRITICAL(m) by the calling task.
func (t *TCB) EnterCritical(m *PortMux) { t.k.enterCritical(t.Proc, m) }

// ExitCritical is portEXIT_CRITICAL(m) by the calling task.
func (t *TCB) ExitCritical(m *PortMux) { t.k.exitCritical(t.Proc, m) }

// Work runs n cycles of the task's own code (charged lazily, see cpuState.owed).
func (t *TCB) Work(n int64) { t.k.work(t.Proc, n) }

// Load reads a shared word (a global variable in SRAM or PSRAM).
func (t *TCB) Load(a sim.Addr) uint64 { return t.k.load(t.Proc, a) }

// Store writes a shared word.
func (t *TCB) Store(a sim.Addr, v uint64) { t.k.store(t.Proc, a, v) }

// Delay is vTaskDelay(ticks): block for ticks on the delayed list, then
// yield. vTaskDelay(0) only yields ("A delay time of zero just forces a
// reschedule", tasks.c): the core selects again, and a task of the same
// priority ahead on the ready list runs first.
func (t *TCB) Delay(ticks uint32) {
	k, p := t.k, t.Proc
	if ticks > 0 {
		k.enterCritical(p, k.KernelLock)
		k.block(p, t, nil, ticks, "vTaskDelay")
		k.exitCritical(p, k.KernelLock)
	}
	k.yieldWithinAPI(p)
}

// Loop returns the iterations of the task's main loop (sim.Proc.Loop):
// for range t.Loop(n) { ... } runs the body n times.
func (t *TCB) Loop(n int) iter.Seq[int] { return t.Proc.Loop(n) }

// Now returns esp_timer_get_time's reading in simulated time (the time the
// task's owed cycles end).
func (t *TCB) Now() sim.Time {
	t.k.flush(t.Proc)
	return t.Proc.Now()
}

// TickCount is xTaskGetTickCount.
func (t *TCB) TickCount() uint32 { return t.k.tickCount }
