package labkit

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"synclab/platforms"
)

// Table is a titled table of text cells, printed on a terminal or put in a
// report.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// WriteText prints t with aligned columns.
func (t Table) WriteText(w io.Writer) {
	width := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	if t.Title != "" {
		fmt.Fprintln(w, t.Title)
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			if i < len(width) {
				b.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.Header)
	seps := make([]string, len(width))
	for i, n := range width {
		seps[i] = strings.Repeat("-", n)
	}
	line(seps)
	for _, r := range t.Rows {
		line(r)
	}
}

// HTML renders t as an HTML table with its title as caption.
func (t Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table class="synclab">`)
	if t.Title != "" {
		b.WriteString("<caption>" + html.EscapeString(t.Title) + "</caption>")
	}
	b.WriteString("<thead><tr>")
	for _, h := range t.Header {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// Num formats a number with 4 significant digits ("-" for NaN).
func Num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

// meanCI formats a summary as "mean ± half-width".
func meanCI(s Summary) string {
	if math.IsNaN(s.Half) {
		return Num(s.Mean)
	}
	return Num(s.Mean) + " ± " + Num(s.Half)
}

// SummaryTable lists, per variant and sweep point, each metric's mean ± 95%
// CI half-width over the successful runs. When runs failed, a "failed runs"
// column says how many and why (e.g. "1 of 3 runs failed: deadlock at ...").
func SummaryTable(r *Result) Table {
	e := r.Experiment
	t := Table{Title: fmt.Sprintf("%s: mean ± 95%% CI over %d repeats", e.Name, e.Repeats), Header: []string{"variant"}}
	for _, a := range e.Sweep {
		t.Header = append(t.Header, a.Param)
	}
	for _, m := range e.Metrics {
		t.Header = append(t.Header, m.Name+" ("+m.Unit+")")
	}
	anyFailed := len(r.Failures()) > 0
	if anyFailed {
		t.Header = append(t.Header, "failed runs")
	}
	points := e.Points()
	for _, v := range e.Variants {
		for p, pt := range points {
			note := r.failureNote(v.Name, p)
			if len(r.runsAt(v.Name, p, false)) == 0 && note == "" {
				continue // not in this shard
			}
			row := []string{v.Name}
			for _, a := range e.Sweep {
				row = append(row, Num(pt[a.Param]))
			}
			for _, m := range e.Metrics {
				row = append(row, meanCI(r.Summary(v.Name, p, m.Name)))
			}
			if anyFailed {
				row = append(row, note)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// FailuresTable lists the failed runs of r: variant, swept values, repeat,
// seed and error. It has no rows when every run succeeded.
func FailuresTable(r *Result) Table {
	e := r.Experiment
	failed := r.Failures()
	t := Table{Title: fmt.Sprintf("%s: %d of %d runs failed (left out of the statistics)", e.Name, len(failed), len(r.Runs)),
		Header: []string{"variant"}}
	for _, a := range e.Sweep {
		t.Header = append(t.Header, a.Param)
	}
	t.Header = append(t.Header, "repeat", "seed", "error")
	points := e.Points()
	for _, run := range failed {
		row := []string{run.Variant}
		for _, a := range e.Sweep {
			row = append(row, Num(points[run.Point][a.Param]))
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprint(run.Repeat), fmt.Sprint(run.Seed), run.Err))
	}
	return t
}

// ClaimsTable shows article vs simulated numbers, deviation, direction and
// verdict, one row per claim; a variant whose runs all failed shows
// "failed" instead of a simulated number.
func ClaimsTable(claims []Claim) Table {
	t := Table{Title: "Claims: article vs simulated (default parameters)",
		Header: []string{"metric", "unit", "article", "simulated (mean ± 95% CI)", "deviation", "direction", "verdict"}}
	for _, c := range claims {
		var art, sim, dev []string
		for _, s := range c.Sides {
			art = append(art, s.Variant+" "+Num(s.Article))
			if s.Sim.N == 0 {
				sim = append(sim, s.Variant+" failed")
				dev = append(dev, "-")
				continue
			}
			sim = append(sim, s.Variant+" "+meanCI(s.Sim))
			dev = append(dev, fmt.Sprintf("%+.0f%%", s.DeviationPct))
		}
		t.Rows = append(t.Rows, []string{c.Metric, c.Unit, strings.Join(art, " / "), strings.Join(sim, " / "), strings.Join(dev, " / "), c.Direction, c.Verdict})
	}
	return t
}

// VariantsTable lists an experiment's variants with their descriptions.
func VariantsTable(e platforms.Experiment) Table {
	t := Table{Title: "variants of " + e.Name + " (-variant NAME)", Header: []string{"variant", "description"}}
	for _, v := range e.Variants {
		t.Rows = append(t.Rows, []string{v.Name, v.Doc})
	}
	return t
}

// ParamsTable lists parameters with value, unit, provenance, accepted range
// (or choices), plausible range for ASSUME, and source.
func ParamsTable(title string, ps platforms.Params) Table {
	t := Table{Title: title, Header: []string{"parameter", "value", "unit", "prov", "accepted", "plausible", "source"}}
	sorted := ps.Clone()
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for _, p := range sorted {
		accepted := fmt.Sprintf("[%g, %g]", p.Min, p.Max)
		if len(p.Choices) > 0 {
			accepted = fmt.Sprint(p.Choices)
		}
		plausible := ""
		if p.Prov == platforms.ASSUME {
			plausible = fmt.Sprintf("%g..%g", p.Low, p.High)
		}
		t.Rows = append(t.Rows, []string{p.Key, Num(p.Value), p.Unit, string(p.Prov), accepted, plausible, p.Source})
	}
	return t
}
