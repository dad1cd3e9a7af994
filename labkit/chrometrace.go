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
	// No displayTimeUnit: older Perfetto versions read "ns" there as the
	// unit of every time (trace_processor's json_display_time_unit stat).
	fmt.Fprintf(bw, "{\"otherData\":%s,\"traceEvents\":[\n", head)
	// Events are written one per line; spans, which may number millions,
	// by appending to one buffer, with each label and lane quoted once.
	first := true
	quoted := map[string][]byte{}
	quote := func(s string) []byte {
		q, ok := quoted[s]
		if !ok {
			q, _ = json.Marshal(s) // a string always marshals
			quoted[s] = q
		}
		return q
	}
	write := func(b []byte) {
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		bw.Write(b) // a write error stays in bw, for Flush
	}
	meta := func(name string, pid, tid int, key string, v any) error {
		m := struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Pid  int            `json:"pid"`
			Tid  int            `json:"tid,omitempty"`
			Args map[string]any `json:"args"`
		}{name, "M", pid, tid, map[string]any{key: v}}
		b, err := json.Marshal(m)
		write(b)
		return err
	}
	var buf []byte
	tids := 0 // thread ids are unique across the file, as a viewer may assume
	for i, r := range runs {
		pid := i + 1
		name := fmt.Sprintf("%s, seed %d", r.Variant, r.Seed)
		if res.Experiment.NumPoints() > 1 {
			name = fmt.Sprintf("%s, %s, seed %d", r.Variant, pointLabel(res.Experiment.Point(r.Point)), r.Seed)
		}
		if err := cmp.Or(meta("process_name", pid, 0, "name", name), meta("process_sort_index", pid, 0, "sort_index", pid)); err != nil {
			return err
		}
		lanes, idx := traceLanes(r.Trace)
		tid0 := tids + 1 // the thread id of lanes[0]
		tids += len(lanes)
		for j, l := range lanes {
			tid := tid0 + j
			if err := cmp.Or(meta("thread_name", pid, tid, "name", fmt.Sprintf("core %d %s", l.core, l.lane)),
				meta("thread_sort_index", pid, tid, "sort_index", j+1)); err != nil {
				return err
			}
		}
		for _, s := range r.Trace.Spans {
			start := nanos(s.Start)
			buf = append(append(append(buf[:0], `{"name":`...), quote(s.Label)...), `,"cat":`...)
			buf = append(append(buf, quote(s.Lane)...), `,"ph":"X","pid":`...)
			buf = append(strconv.AppendInt(buf, int64(pid), 10), `,"tid":`...)
			buf = append(strconv.AppendInt(buf, int64(tid0+idx[traceLane{s.Core, s.Lane}]), 10), `,"ts":`...)
			buf = append(appendMicros(buf, start), `,"dur":`...)
			buf = append(appendMicros(buf, nanos(s.End)-start), '}')
			write(buf)
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

// appendMicros appends ns nanoseconds as an exact decimal count of
// microseconds, the unit of the format's times: "1.5" for 1500.
func appendMicros(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	if f := ns % 1000; f != 0 {
		frac := [3]byte{byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)}
		n := 3
		for frac[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), frac[:n]...)
	}
	return b
}
