package sim

import (
	"fmt"
	"slices"
	"strings"
)

// SpinLocks is the OS of a bare-metal program: each named lock is a
// test-and-test-and-set spinlock on its own word (0 free, else the
// holder's process number). OS models in platforms replace it.
type SpinLocks struct {
	Addr map[string]Addr // lock name to lock word
	Loop int64           // cycles of one iteration of the wait loop
}

// Sync implements OS for the ops "lock" and "unlock".
func (s *SpinLocks) Sync(p *Proc, op Op) error {
	a, ok := s.Addr[op.Obj]
	if !ok {
		names := make([]string, 0, len(s.Addr))
		for n := range s.Addr {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("unknown lock %q; known: %s", op.Obj, strings.Join(names, ", "))
	}
	me := p.ID()
	switch op.Sync {
	case "lock":
		for {
			p.SpinUntil(a, s.Loop, func(v uint64) bool { return v == 0 })
			if _, ok := p.CAS(a, 0, me); ok {
				return nil
			}
		}
	case "unlock":
		if v := p.Load(a); v != me {
			return fmt.Errorf("unlock of lock %q, which %s does not hold (holder: %s)", op.Obj, p.Name, p.e.procName(v))
		}
		p.Store(a, 0)
		return nil
	}
	return fmt.Errorf("sync op %q on %q: SpinLocks knows lock, unlock", op.Sync, op.Obj)
}

// ID returns the process number (1-based, in creation order): a value a
// lock word can hold to name its owner.
func (p *Proc) ID() uint64 { return p.id }

func (e *Engine) procName(id uint64) string {
	if id == 0 || id > uint64(len(e.procs)) {
		return "nobody"
	}
	return e.procs[id-1].Name
}
