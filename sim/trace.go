package sim

import "fmt"

// Span is one interval of a core's timeline: a power/activity state, or a
// label an OS model adds (a lock held, a task running).
type Span struct {
	Core  int    `msgpack:"core" json:"core"`
	Lane  string `msgpack:"lane" json:"lane"`   // "state" for core states; OS models use their own lanes ("lock", "task")
	Label string `msgpack:"label" json:"label"` // state name, lock name, task name
	Start Time   `msgpack:"start" json:"start"`
	End   Time   `msgpack:"end" json:"end"`
}

// Trace records spans inside a window of simulated time, for the per-core
// timeline charts. A nil *Trace records nothing, so models call it freely.
type Trace struct {
	From  Time   `msgpack:"from" json:"from"`
	To    Time   `msgpack:"to" json:"to"`
	Spans []Span `msgpack:"spans" json:"spans"`
	// Max bounds the number of spans kept, so a long window cannot exhaust memory.
	Max int `msgpack:"max" json:"max"`
}

// NewTrace returns a trace that keeps up to max spans overlapping [from, to).
func NewTrace(from, to Time, max int) *Trace {
	return &Trace{From: from, To: to, Max: max}
}

// Add records s, clipped to the window; spans outside it are dropped.
func (t *Trace) Add(s Span) {
	if t == nil || s.End <= t.From || s.Start >= t.To || len(t.Spans) >= t.Max {
		return
	}
	s.Start = max(s.Start, t.From)
	s.End = min(s.End, t.To)
	t.Spans = append(t.Spans, s)
}

// Window returns the spans of t inside [from, to), clipped to it, as a new
// trace. A window that is empty or reaches outside the one t recorded is an
// error naming both: its missing spans would read as idle time.
func (t *Trace) Window(from, to Time) (*Trace, error) {
	if from >= to || from < t.From || to > t.To {
		return nil, fmt.Errorf("trace window %v-%v: want a non-empty window inside the recorded %v-%v", from, to, t.From, t.To)
	}
	w := NewTrace(from, to, len(t.Spans))
	for _, s := range t.Spans {
		w.Add(s)
	}
	return w, nil
}
