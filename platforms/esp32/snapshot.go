package esp32

import "synclab/sim"

// Snapshot records the kernel's state for fast-forward (sim.Snapshotter):
// per-core scheduler state, the ready, delayed and event lists, every task
// control block, lock, semaphore and queue (its items too), and the
// interrupt-blame log. Counters and times move with the period; everything
// else must repeat exactly.
func (k *Kernel) Snapshot(s *sim.Snapshot) {
	for i := range k.cpu {
		pc := &k.cpu[i]
		sim.Ident(s, pc.cur)
		sim.Ident(s, pc.outgoing)
		s.Key(uint64(pc.nesting))
		s.Key(uint64(pc.savedLevel))
		s.Flag(pc.selectOwed)
		s.Flag(pc.yieldPending)
		s.Key(uint64(pc.owed))
		s.Time(&pc.switchedIn)
	}
	s.Epoch(uint64(k.tickCount))
	s.Key(uint64(k.topReady))
	s.Int(&k.Switches)
	s.Int(&k.SoC.IPIs)
	for prio := range k.ready {
		if l := k.ready[prio]; len(l) > 0 {
			s.Key(uint64(prio))
			s.Key(uint64(len(l)))
			for _, t := range l {
				sim.Ident(s, t)
			}
			sim.Ident(s, k.readyIndex[prio])
		}
	}
	s.Key(uint64(len(k.delayed)))
	for _, t := range k.delayed {
		sim.Ident(s, t)
	}
	for _, t := range k.Tasks {
		t.snapshot(s)
	}
	for _, m := range k.muxes {
		m.snapshot(s)
	}
	for _, sem := range k.sems {
		sim.Ident(s, sem.holder)
		s.Key(uint64(sem.recursion))
		s.Key(uint64(len(sem.waitRecv.tasks)))
		for _, t := range sem.waitRecv.tasks {
			sim.Ident(s, t)
		}
	}
	for _, q := range k.queues {
		q.snapshot(s)
	}
	if b := k.blameLog; b != nil {
		b.snapshot(s)
	}
}

func (t *TCB) snapshot(s *sim.Snapshot) {
	s.Key(uint64(t.Priority))
	s.Key(uint64(t.BasePriority))
	s.Key(uint64(t.State))
	sim.Ident(s, t.event)
	s.Key(uint64(t.wakeTick))
	s.Flag(t.delayed)
	s.Flag(t.timedOut)
	s.Flag(t.inTransit)
	s.Flag(t.wokenInTransit)
	s.Key(uint64(t.MutexesHeld))
	s.Time(&t.RunTime)
	s.Time(&t.lastIn)
}

func (m *PortMux) snapshot(s *sim.Snapshot) {
	s.Key(uint64(m.owner))
	s.Key(uint64(m.count))
	s.Time(&m.since)
	for i := range m.spinFrom {
		s.Time(&m.spinFrom[i])
	}
	s.Int(&m.Acquires)
	s.Int(&m.Contended)
	s.Time(&m.SpinTime)
}
