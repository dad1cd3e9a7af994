package nbexport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"synclab/labkit/internal/plural"
	"synclab/platforms"
)

// reportInfo is what the title block and the stamp say about a run of a
// notebook.
type reportInfo struct {
	notebook string // path as given
	source   []byte // the notebook file as read
	title    string
	params   []Param
	set      map[string]string // -p values
	records  []RunRecord
	code     string // the exporting program's code version
	when     time.Time
	defaults func(experiment string) (map[string]float64, bool) // Options.Defaults
}

// tocPlaceholder is replaced by the table of contents once the page is
// rendered (the headings' ids are nbconvert's).
const tocPlaceholder = "<!--synclab-toc-->"

// titleBlockHTML opens the report: title, when and from what it was run,
// with which parameters and what ran. The summary (the Markdown outputs of
// cells tagged summary) and the table of contents follow it in the same
// cell.
func titleBlockHTML(ri reportInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<header class="synclab-titleblock"><h1 class="synclab-title">%s</h1>`+"\n", html.EscapeString(ri.title))
	b.WriteString(`<dl class="synclab-meta">`)
	item := func(k, v string) { fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>", k, v) }
	item("Notebook", "<code>"+html.EscapeString(filepath.ToSlash(ri.notebook))+"</code>")
	item("Run", html.EscapeString(ri.when.UTC().Format("2006-01-02 15:04 MST"))+", code "+html.EscapeString(codeVersions(ri)))
	if len(ri.set) > 0 {
		item("Parameters", html.EscapeString(settings(ri.set))+" (set for this report; the others as in the notebook)")
	} else {
		item("Parameters", "as in the notebook (listed at the end)")
	}
	item("Ran", ranText(ri.records))
	b.WriteString("</dl></header>")
	return b.String()
}

// tocHTML is the table of contents (filled in once the page is rendered).
const tocHTML = `<nav class="synclab-toc"><p class="synclab-toc-title">Contents</p>` + tocPlaceholder + "</nav>"

// ranText sums up what ran, per experiment: "rk3399-spinlock-wait (2
// definitions, 12 runs: 6 computed, 6 from the store)"; the stamp lists
// each definition.
func ranText(records []RunRecord) string {
	type sum struct{ defs, runs, computed, cached, traced, failed int }
	var names []string
	by := map[string]*sum{}
	for _, r := range records {
		s, ok := by[r.Experiment]
		if !ok {
			s = &sum{}
			by[r.Experiment] = s
			names = append(names, r.Experiment)
		}
		s.defs++
		s.runs += r.Runs
		s.failed += r.Failed
		switch {
		case r.Traced:
			s.traced += r.Runs
		case r.Cached:
			s.cached += r.Runs
		default:
			s.computed += r.Runs
		}
	}
	if len(names) == 0 {
		return "no experiment"
	}
	var parts []string
	for _, n := range names {
		s := by[n]
		var from []string
		for _, f := range []struct {
			n    int
			what string
		}{{s.computed, "computed"}, {s.cached, "from the store"}, {s.traced, "traced"}, {s.failed, "failed"}} {
			if f.n > 0 {
				from = append(from, fmt.Sprintf("%d %s", f.n, f.what))
			}
		}
		defs := ""
		if s.defs > 1 {
			defs = fmt.Sprintf("%d definitions, ", s.defs)
		}
		parts = append(parts, fmt.Sprintf("<code>%s</code> (%s%s: %s)", html.EscapeString(n), defs, plural.Count(s.runs, "run"), strings.Join(from, ", ")))
	}
	return strings.Join(parts, "; ")
}

// runsText says how many runs an experiment had and where they came from.
func runsText(r RunRecord) string {
	points := 1
	for _, a := range r.Sweep {
		points *= len(a.Values)
	}
	s := "(" + plural.Count(r.Runs, "run")
	if r.Runs == len(r.Variants)*points*r.Repeats { // else several definitions (a sensitivity run)
		s = "(" + plural.Count(len(r.Variants), "variant")
		if points > 1 {
			s += fmt.Sprintf(" x %d points", points)
		}
		s += " x " + plural.Count(r.Repeats, "repeat") + " = " + plural.Count(r.Runs, "run")
	}
	switch {
	case r.Traced:
		s += ", traced"
	case r.Cached:
		s += ", from the store"
	default:
		s += ", computed"
	}
	if r.Failed > 0 {
		s += fmt.Sprintf(", %d failed", r.Failed)
	}
	return s + ")"
}

// settings renders -p values as "a=1, b=2".
func settings(set map[string]string) string {
	return joinSorted(set, func(v string) string { return v })
}

// joinSorted renders a map as "k=v, ..." in key order.
func joinSorted[V any](m map[string]V, format func(V) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + format(m[k])
	}
	return strings.Join(parts, ", ")
}

// codeVersions lists the code versions the notebook's experiments ran
// with, or the exporter's when it ran none.
func codeVersions(ri reportInfo) string {
	var out []string
	for _, r := range ri.records {
		if !slices.Contains(out, r.Code) {
			out = append(out, r.Code)
		}
	}
	if len(out) == 0 && ri.code != "" {
		out = append(out, ri.code)
	}
	if len(out) == 0 {
		return "unknown"
	}
	return strings.Join(out, "; ")
}

// stampHTML ends the report: everything needed to run it again and get
// the same numbers.
func stampHTML(ri reportInfo) string {
	var b strings.Builder
	sum := sha256.Sum256(ri.source)
	b.WriteString(`<section class="synclab-stamp"><h2 id="Reproducibility">Reproducibility</h2>` + "\n")
	cmd := "lab report " + filepath.ToSlash(ri.notebook) + " -o DIR"
	keys := make([]string, 0, len(ri.set))
	for k := range ri.set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd += " -p " + shellQuote(k+"="+ri.set[k])
	}
	fmt.Fprintf(&b, "<p>Run again with <code>%s</code>. Notebook <code>%s</code>, sha256 <code>%s</code>; its cells' code <code>%s</code>",
		html.EscapeString(cmd), html.EscapeString(filepath.ToSlash(ri.notebook)), hex.EncodeToString(sum[:8]), html.EscapeString(codeVersions(ri)))
	goV, gonb := "", ""
	for _, r := range ri.records {
		goV, gonb = r.Go, r.GoNB
	}
	if goV != "" {
		fmt.Fprintf(&b, ", Go %s", html.EscapeString(goV))
	}
	if gonb != "" {
		fmt.Fprintf(&b, ", GoNB %s", html.EscapeString(gonb))
	}
	fmt.Fprintf(&b, "; executed %s", html.EscapeString(ri.when.UTC().Format(time.RFC3339)))
	if ri.code != "" {
		fmt.Fprintf(&b, " by lab report (a build of its own: code <code>%s</code>)", html.EscapeString(ri.code))
	}
	b.WriteString(".</p>\n")
	if len(ri.params) > 0 {
		b.WriteString(`<table class="synclab"><caption>Notebook parameters (the cell tagged parameters)</caption><thead><tr><th>parameter</th><th>type</th><th>value</th><th>in the notebook</th><th>what it is</th></tr></thead><tbody>`)
		for _, p := range ri.params {
			val, ok := ri.set[p.Name]
			if !ok {
				val = p.Value
			} else {
				val += " (set with -p)"
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", html.EscapeString(p.Name), html.EscapeString(p.Type),
				html.EscapeString(val), html.EscapeString(p.Value), html.EscapeString(p.Doc))
		}
		b.WriteString("</tbody></table>\n")
	}
	if len(ri.records) == 0 {
		b.WriteString("<p>The notebook ran no experiment through labkit.RunWith.</p>\n")
	} else {
		b.WriteString(`<table class="synclab"><caption>Experiments run (each definition hash names one result in data/results)</caption><thead><tr><th>experiment</th><th>platform</th><th>variants</th><th>sweep</th><th>repeats</th><th>seed</th><th>values set (for an experiment run in several definitions: those unlike its usual values, listed under the table)</th><th>definition hash</th><th>runs</th></tr></thead><tbody>`)
		defaults := map[string]map[string]float64{}
		if ri.defaults != nil {
			for _, r := range ri.records {
				if d, ok := ri.defaults(r.Experiment); ok {
					defaults[r.Experiment] = d
				}
			}
		}
		records := slices.Clone(ri.records)
		for i, r := range records {
			if d, ok := defaults[r.Experiment]; ok {
				records[i].Set = changed(r.Params, d)
			}
		}
		usual := usualValues(records, defaults)
		for _, r := range records {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td><code>%s</code></td><td>%s</td></tr>",
				html.EscapeString(r.Experiment), html.EscapeString(r.Platform), html.EscapeString(strings.Join(r.Variants, ", ")),
				html.EscapeString(sweepText(r.Sweep)), r.Repeats, r.Seed, html.EscapeString(distinctive(r, usual[r.Experiment])), html.EscapeString(r.Hash),
				html.EscapeString(strings.Trim(runsText(r), "()")+noteText(r)))
		}
		b.WriteString("</tbody></table>\n")
		for _, name := range slices.Sorted(maps.Keys(usual)) {
			if text := usualLine(usual[name], defaults[name]); text != "" {
				fmt.Fprintf(&b, "<p>Usual values of <code>%s</code> (its rows above list those that differ): %s.</p>\n",
					html.EscapeString(name), html.EscapeString(text))
			}
		}
		for _, r := range ri.records {
			fmt.Fprintf(&b, "<details><summary>Every parameter of <code>%s</code> (%s)</summary><p>%s</p></details>\n",
				html.EscapeString(r.Experiment), html.EscapeString(r.Hash), html.EscapeString(floatSettings(r.Params)))
		}
	}
	b.WriteString("</section>")
	return b.String()
}

// usualValues returns, for each experiment that several records ran, the
// usual value of every parameter that a notebook set or that differs
// between them: the default if the experiment's defaults are known and it
// is among the most frequent values, else the most frequent value if
// several records share it and no other value is as frequent. A parameter
// without one (every record its own value, or a tie) is NaN: each row then
// lists its value. A row lists only what sets its definition apart.
func usualValues(records []RunRecord, defaults map[string]map[string]float64) map[string]map[string]float64 {
	byExp := map[string][]RunRecord{}
	for _, r := range records {
		byExp[r.Experiment] = append(byExp[r.Experiment], r)
	}
	out := map[string]map[string]float64{}
	for name, rs := range byExp {
		if len(rs) < 2 {
			continue
		}
		keys := map[string]bool{}
		for _, r := range rs {
			for k := range r.Set {
				keys[k] = true
			}
			for k, v := range r.Params {
				if v0, ok := rs[0].Params[k]; !ok || v0 != v {
					keys[k] = true
				}
			}
		}
		if len(keys) == 0 {
			continue
		}
		u := map[string]float64{}
		for k := range keys {
			count := map[float64]int{}
			for _, r := range rs {
				if v, ok := r.Params[k]; ok {
					count[v]++
				}
			}
			most := slices.Max(slices.Collect(maps.Values(count)))
			var top []float64
			for v, n := range count {
				if n == most {
					top = append(top, v)
				}
			}
			def, hasDef := defaults[name][k]
			switch {
			case hasDef && slices.Contains(top, def):
				u[k] = def
			case len(top) == 1 && most > 1:
				u[k] = top[0]
			default:
				u[k] = math.NaN()
			}
		}
		out[name] = u
	}
	return out
}

// distinctive renders what sets a record's definition apart: the values
// its notebook set or, when its experiment has usual values, the values
// unlike those ("usual values" when none is).
func distinctive(r RunRecord, usual map[string]float64) string {
	if usual == nil {
		return floatSettings(r.Set)
	}
	diff := map[string]float64{}
	for k, u := range usual {
		if v, ok := r.Params[k]; ok && v != u { // always for NaN: no usual value
			diff[k] = v
		}
	}
	if len(diff) == 0 {
		return "usual values"
	}
	return floatSettings(diff)
}

// usualLine is what the line under the table says of an experiment's usual
// values, "" when it has none to say.
func usualLine(usual, defaults map[string]float64) string {
	u := maps.Clone(usual)
	maps.DeleteFunc(u, func(_ string, v float64) bool { return math.IsNaN(v) })
	if defaults == nil {
		return floatSettings(u)
	}
	if c := changed(u, defaults); len(c) > 0 {
		return floatSettings(c) + ", the others its defaults"
	}
	return "its defaults"
}

// changed returns the values of params that differ from defaults (or that
// defaults lacks).
func changed(params, defaults map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range params {
		if d, ok := defaults[k]; !ok || d != v {
			out[k] = v
		}
	}
	return out
}

func noteText(r RunRecord) string {
	if r.Note == "" {
		return ""
	}
	return "; " + r.Note
}

// sweepText renders sweep axes as "cores = 1, 2, 4".
func sweepText(axes []SweepAxis) string {
	var parts []string
	for _, a := range axes {
		parts = append(parts, a.Param+" = "+platforms.FormatValues(a.Values))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// floatSettings renders parameter values as "a=1, b=2" in key order.
// Values as -set takes them: "iterations=1000000", not 1e+06.
func floatSettings(m map[string]float64) string { return joinSorted(m, platforms.FormatValue) }

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=.,-+/:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
