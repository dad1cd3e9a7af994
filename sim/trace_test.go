package sim

import "testing"

// The trace records core states inside its window only.
func TestTrace(t *testing.T) {
	r := newRig(t, 1, false, nil)
	r.e.Trace = NewTrace(500*Nanosecond, 2*Microsecond, 100)
	r.e.Spawn(r.e.Cores()[0], "t", func(p *Proc) { p.Compute(1000); p.Sleep(3 * Microsecond) })
	r.run(t)
	var total Time
	for _, s := range r.e.Trace.Spans {
		if s.Start < 500*Nanosecond || s.End > 2*Microsecond {
			t.Fatalf("span %+v outside the window", s)
		}
		total += s.End - s.Start
	}
	if total != 1500*Nanosecond {
		t.Fatalf("spans cover %v, want the 1.5us window", total)
	}
}
