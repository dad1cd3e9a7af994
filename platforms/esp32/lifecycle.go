// A task's life in tasks.c: xTaskCreatePinnedToCore, vTaskStartScheduler
// with its idle tasks (prvIdleTask), and vTaskDelete at a task's end.

package esp32

import (
	"fmt"

	"synclab/sim"
)

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
	// Until Start, a deadlock report says why the task never ran.
	t.Proc.SetWaiting(notStarted, false)
	t.State = Ready
	k.addReady(t)
	return t, nil
}

func (k *Kernel) newTCB(name string, prio, core int) *TCB {
	t := &TCB{Name: name, k: k, Priority: prio, BasePriority: prio, Affinity: core}
	k.SoC.Alloc(tcbBytes, 8) // the TCB itself: only its place in SRAM matters
	t.notifyAddr = k.SoC.Alloc(uint64(16*k.cfg.NotifyEntries), k.notifyAlign)
	k.Tasks = append(k.Tasks, t)
	return t
}

// notStarted is what a task created before Start waits on until Start.
const notStarted = "the scheduler, never started (call Kernel.Start, vTaskStartScheduler, before Engine.Run)"

// Start is vTaskStartScheduler: one idle task per core (waiti until an
// interrupt), the first task on each core, and the per-core ticks.
func (k *Kernel) Start() error {
	if k.started {
		return fmt.Errorf("scheduler already started")
	}
	k.started = true
	for _, t := range k.Tasks {
		t.Proc.SetWaiting("", false)
	}
	period := sim.Second / sim.Time(k.cfg.TickHz)
	for i := range k.cpu {
		pc := &k.cpu[i]
		idle := k.newTCB(fmt.Sprintf("IDLE%d", i), idlePriority, i)
		idle.Proc = k.E.NewProc(idle.Name, true, func(p *sim.Proc) { k.idleTask(p) })
		idle.Proc.Data = idle
		idle.State = Ready
		k.addReady(idle)
		pc.idle = idle
	}
	for i := range k.cpu {
		pc := &k.cpu[i]
		next := k.pickNext(i, false)
		next.State = Running
		pc.cur = next
		pc.switchedIn = k.E.Now()
		next.lastIn = k.E.Now()
		pc.traced = next
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
	k.removeReady(t)
	t.State = Deleted
	pc.outgoing = nil
	next := k.pickNext(c, false)
	next.State = Running
	pc.cur = next
	// Leave the interrupt level raised: the process ends here, and the
	// next task restores its own level when it resumes.
	k.release(p, k.KernelLock)
	k.saveContext(p, c, t, next)
	core := pc.core
	k.E.After(0, sim.NewEvent(func() { core.Start(next.Proc) }, false))
}
