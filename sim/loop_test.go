package sim

import (
	"context"
	"testing"
)

// A loop nested in a process's main loop (a blocking call's retry loop)
// opens at every iteration of the main one: each opening at a depth takes
// the state the last one there left, reset, instead of allocating one.
func TestNestedLoopReusesItsState(t *testing.T) {
	r := newRig(t, 1, true, nil)
	defer r.e.Close()
	var states []*loopState
	r.e.Spawn(r.e.Cores()[0], "w", func(p *Proc) {
		for range p.Loop(3) {
			for i := range p.Loop(2) {
				if i == 0 {
					states = append(states, p.loops[1])
				}
				if l := p.loops[1]; l.n != 2 || l.done != i+1 {
					t.Errorf("inner loop state %+v at its iteration %d, want n 2 and done %d", *l, i, i+1)
				}
				p.Compute(1)
			}
		}
	})
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(states) != 3 || states[1] != states[0] || states[2] != states[0] {
		t.Errorf("the inner loop's three openings had states %v: want one, reused", states)
	}
}
