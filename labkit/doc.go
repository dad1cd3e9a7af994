// Package labkit is what a notebook touches: it runs the platforms'
// experiments (plain-data platforms.Experiment definitions with their run
// functions) and turns the runs into statistics, claims against the source
// articles, charts and reports. It knows no concrete platform: the catalog
// package lists their experiments.
//
// Where things are:
//   - runner.go: the deterministic parallel runner (Execute, RunExperiment),
//     run seeds, shards; progress.go its progress bars.
//   - store.go: the msgpack result store (atomic files, checksums, merge);
//     code.go the code version that stamps and keys results.
//   - stats.go: summaries, Student-t intervals, Fieller ratios; table.go and
//     markdown.go text and Markdown tables.
//   - reference.go: the articles' numbers (data/reference) and claims.
//   - sensitivity.go: which conclusions survive the ASSUME ranges.
//   - charts.go, display.go, report.go: go-echarts charts, inline display in
//     GoNB, self-contained HTML reports; nbexport executes notebooks headless.
//   - platform.go: parameters grouped by platform, for tables and the README.
//
// A run that fails (a simulated deadlock at one parameter point) does not
// sink the experiment: its error is kept in the Result (Run.Err), left out
// of the statistics and shown in the tables, claims and reports, and the
// result is never cached as complete (see RunsFailedError).
package labkit
