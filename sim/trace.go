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
	// sealed is set once the spans open at the window's end are recorded
	// (Engine.SealTrace): the trace takes no more.
	sealed bool
}

// NewTrace returns a trace that keeps up to max spans overlapping [from, to).
func NewTrace(from, to Time, max int) *Trace {
	return &Trace{From: from, To: to, Max: max}
}

// Add records s, clipped to the window; spans outside it are dropped.
func (t *Trace) Add(s Span) {
	if t == nil || t.sealed || s.End <= t.From || s.Start >= t.To || len(t.Spans) >= t.Max {
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

// TraceSpanner is a model that adds spans of its own to the engine's trace
// (a task's run, a lock held) and can say which are open (SealTrace).
type TraceSpanner interface {
	// OpenSpans reports, with add, every span the model has begun and not
	// yet added, ending at now.
	OpenSpans(now Time, add func(Span))
}

// SealTrace makes the engine seal its trace at the first event at or after
// the end of the trace's window: the spans open then (every core's state and
// the models' own, which must be all the models that add spans) are recorded
// clipped to the window, and the trace takes nothing more. Without a seal,
// a span open at the window's end is recorded when it ends, and one still
// open when the run ends is not. A sealed trace is the same whether
// fast-forward skips periods after the window or not; a trace that is not
// sealed keeps fast-forward from skipping at all, since a span open across a
// skip would end with its start moved past the window.
func (e *Engine) SealTrace(models ...TraceSpanner) {
	if e.Trace == nil {
		return
	}
	e.spanners, e.sealAt = models, e.Trace.To
}

// seal records the open spans and closes the trace (SealTrace).
func (e *Engine) seal() {
	e.sealAt = never
	tr := e.Trace
	for _, c := range e.cores {
		c.traceState(e.now)
	}
	for _, m := range e.spanners {
		m.OpenSpans(e.now, tr.Add)
	}
	tr.sealed = true
}
