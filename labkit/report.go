package labkit

import (
	"errors"
	"fmt"
	"html"
	"strings"
	"time"

	"synclab/labkit/internal/plural"
)

// Report collects markdown text, tables and charts and writes one
// self-contained HTML file (the ECharts library inlined).
type Report struct {
	Title  string
	blocks []string
	charts []*Chart
}

// NewReport starts a report.
func NewReport(title string) *Report { return &Report{Title: title} }

// Markdown adds text (see the Markdown function for the subset rendered).
func (r *Report) Markdown(md string) *Report {
	r.blocks = append(r.blocks, Markdown(md))
	return r
}

// Text adds a paragraph of plain text, shown as written: an experiment's
// description is text, and its "C*V^2*f" is no emphasis.
func (r *Report) Text(s string) *Report {
	r.blocks = append(r.blocks, "<p>"+html.EscapeString(s)+"</p>")
	return r
}

// Table adds a table.
func (r *Report) Table(t Table) *Report {
	r.blocks = append(r.blocks, t.HTML())
	return r
}

// Chart adds charts.
func (r *Report) Chart(cs ...*Chart) *Report {
	for _, c := range cs {
		r.blocks = append(r.blocks, c.HTML())
		r.charts = append(r.charts, c)
	}
	return r
}

// Stamp returns the reproducibility stamp of a result as markdown.
func Stamp(res *Result) string {
	runs := plural.Count(len(res.Runs), "run")
	if n := len(res.Failures()); n > 0 {
		runs += fmt.Sprintf(", **%d failed**", n)
	}
	return fmt.Sprintf("**Reproducibility:** experiment `%s`, seed `%d`, definition hash `%s`, code `%s`, %s (%s), computed %s.",
		res.Experiment.Name, res.Experiment.Seed, res.Hash, res.Code, runs, res.Shard, res.Created.Format(time.RFC3339))
}

// Result adds an experiment's result: description, the failed runs (if
// any), the claims table (the article against the model), a bar chart per
// metric, the summary table, the parameters and the reproducibility stamp.
// When every run failed, the failed runs stand in for the claims, charts
// and summary, which would be empty.
func (r *Report) Result(res *Result) *Report {
	e := res.Experiment
	r.Markdown("## " + e.Name).Text(e.Description)
	failed := len(res.Failures())
	if failed > 0 {
		r.Table(FailuresTable(res))
	}
	if failed < len(res.Runs) {
		if claims := res.Claims(); len(claims) > 0 {
			r.Table(ClaimsTable(claims))
		}
		for _, m := range e.Metrics {
			r.Chart(BarsCI(res, m.Name))
		}
		r.Table(SummaryTable(res))
	}
	r.Table(ParamsTable("Parameters of "+e.Name+" (platform "+e.Platform+")", e.Params))
	r.Markdown(Stamp(res))
	return r
}

// ResultReport is a report of one result.
func ResultReport(res *Result) *Report {
	return NewReport("SyncLab: " + res.Experiment.Name).Result(res)
}

// HTML renders the report as one HTML page that needs no network when the
// local ECharts copy exists.
func (r *Report) HTML() string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html.EscapeString(r.Title) + "</title>\n")
	b.WriteString(`<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;line-height:1.45}
code,pre{background:#f5f5f5}pre{padding:.5em;overflow:auto}.synclab-chart{margin:1em 0}.synclab-data{font-size:.85em;margin:-.5em 0 1em}</style>` + tableCSS + "\n")
	if len(r.charts) > 0 {
		b.WriteString(LibraryHTML() + "\n")
	}
	b.WriteString("</head><body>\n<h1>" + html.EscapeString(r.Title) + "</h1>\n")
	for _, blk := range r.blocks {
		b.WriteString(blk + "\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// ErrNoCharts is the error WriteFile wraps when it has written a report
// whose charts cannot be drawn (no local ECharts copy found: see
// ChartLibrary).
var ErrNoCharts = errors.New("charts cannot be drawn")

// WriteFile writes the report's HTML to path (atomically, mode 0644). A
// report with charts but no local ECharts copy is still written, with a
// visible error in their place, and WriteFile then returns an error that
// wraps ErrNoCharts and says how to get the copy: the program learns that
// the page is incomplete before a reader does.
func (r *Report) WriteFile(path string) error {
	if err := WriteFileAtomic(path, []byte(r.HTML()), 0o644); err != nil {
		return err
	}
	if len(r.charts) > 0 {
		if _, err := ChartLibrary(); err != nil {
			return fmt.Errorf("%s written, but its %w: %v", path, ErrNoCharts, err)
		}
	}
	return nil
}
