package labkit

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"synclab/sim"
)

// WriteChromeTrace writes the traces of res's runs (those recorded with
// RunOptions.Trace: repeat 0 of every variant and sweep point) in the JSON
// form of the Trace Event Format, which Perfetto (ui.perfetto.dev) opens.
// Each traced run is a process, named by its variant and sweep point; each
// core and lane of it (core states, locks held, tasks) is a thread; each
// span is a complete event. Times are microseconds of simulated time on a
// whole-nanosecond grid: Perfetto rounds each time to the nanosecond, so a
// span must end on the grid exactly where the next one on its thread
// begins, or the two would overlap without nesting. Where the timeline
// charts show a window of a few hundred spans, a trace viewer pans and
// searches all of them (up to platforms.MaxTraceSpans per run). It is an
// error when no run of res has a trace.
func WriteChromeTrace(w io.Writer, res *Result) error {
	var runs []Run
	for _, r := range res.Runs {
		if r.Trace != nil {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("experiment %s: no run recorded a trace (run it with tracing on: RunOptions.Trace, lab run -trace)", res.Experiment.Name)
	}
	bw := bufio.NewWriter(w)
	// The fixed fields go first, so that the file says what ran before its
	// events (which may run to millions of lines).
	head, err := json.Marshal(struct {
		Experiment string `json:"experiment"`
		Hash       string `json:"hash"`
		Commit     string `json:"commit,omitempty"`
		Seed       uint64 `json:"seed"`
		Clock      string `json:"clock"`
	}{res.Experiment.Name, res.Hash, res.Code.Commit, res.Experiment.Seed, "simulated"})
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "{\"displayTimeUnit\":\"ns\",\"otherData\":%s,\"traceEvents\":[\n", head)
	first := true
	event := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
		return err
	}
	type meta struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid,omitempty"`
		Args map[string]any `json:"args"`
	}
	type span struct {
		Name string          `json:"name"`
		Cat  string          `json:"cat"`
		Ph   string          `json:"ph"`
		Pid  int             `json:"pid"`
		Tid  int             `json:"tid"`
		Ts   json.RawMessage `json:"ts"`
		Dur  json.RawMessage `json:"dur"`
	}
	for i, r := range runs {
		pid := i + 1
		name := fmt.Sprintf("%s, seed %d", r.Variant, r.Seed)
		if res.Experiment.NumPoints() > 1 {
			name = fmt.Sprintf("%s, %s, seed %d", r.Variant, pointLabel(res.Experiment.Point(r.Point)), r.Seed)
		}
		if err := event(meta{"process_name", "M", pid, 0, map[string]any{"name": name}}); err != nil {
			return err
		}
		if err := event(meta{"process_sort_index", "M", pid, 0, map[string]any{"sort_index": pid}}); err != nil {
			return err
		}
		lanes, idx := traceLanes(r.Trace)
		for j, l := range lanes {
			tid := j + 1
			if err := event(meta{"thread_name", "M", pid, tid, map[string]any{"name": fmt.Sprintf("core %d %s", l.core, l.lane)}}); err != nil {
				return err
			}
			if err := event(meta{"thread_sort_index", "M", pid, tid, map[string]any{"sort_index": tid}}); err != nil {
				return err
			}
		}
		for _, s := range r.Trace.Spans {
			start := nanos(s.Start)
			if err := event(span{s.Label, s.Lane, "X", pid, idx[traceLane{s.Core, s.Lane}] + 1, micros(start), micros(nanos(s.End) - start)}); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// traceLane is one row of a timeline: a core and one of its lanes.
type traceLane struct {
	core int
	lane string
}

// traceLanes returns the lanes of tr's spans, by core and then lane name,
// and the index of each (none for a nil trace).
func traceLanes(tr *sim.Trace) ([]traceLane, map[traceLane]int) {
	idx := map[traceLane]int{}
	var lanes []traceLane
	if tr != nil {
		for _, s := range tr.Spans {
			if l := (traceLane{s.Core, s.Lane}); idx[l] == 0 {
				idx[l] = 1
				lanes = append(lanes, l)
			}
		}
	}
	slices.SortFunc(lanes, func(a, b traceLane) int {
		return cmp.Or(cmp.Compare(a.core, b.core), strings.Compare(a.lane, b.lane))
	})
	for i, l := range lanes {
		idx[l] = i
	}
	return lanes, idx
}

// nanos rounds t (>= 0) to the nearest nanosecond, the resolution of trace
// viewers.
func nanos(t sim.Time) int64 { return (int64(t) + int64(sim.Nanosecond)/2) / int64(sim.Nanosecond) }

// micros writes ns nanoseconds as an exact decimal count of microseconds,
// the unit of the format's times: "1.5" for 1500.
func micros(ns int64) json.RawMessage {
	b := strconv.AppendInt(nil, ns/1000, 10)
	if f := ns % 1000; f != 0 {
		frac := strconv.AppendInt(nil, f+1000, 10)[1:] // 3 digits, zero-padded
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		b = append(append(b, '.'), frac...)
	}
	return b
}
