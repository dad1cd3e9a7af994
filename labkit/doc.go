// Package labkit is what a notebook touches: it runs the platforms'
// experiments (plain-data platforms.Experiment definitions with their run
// functions) and turns the runs into statistics, claims against the source
// articles, charts and reports. It knows no concrete platform: the catalog
// package lists their experiments.
//
// Where things are:
//   - runner.go: the deterministic parallel runner (Execute), run seeds,
//     shards, the MaxRuns bound; progress.go its progress bars.
//   - cache.go: RunExperiment through the result store; journal.go the
//     journal of finished runs that resumes an interrupted run.
//   - store.go: the msgpack result file (checksums, merge); decodecheck.go
//     bounded decoding and consistency checks; fsutil.go atomic writes of
//     regular files only; code.go the code version that stamps and keys
//     results (the hash of the sources compiled in: package synclab).
//   - export.go: results as JSON (RunDoc, schema/run.v1.json) and CSV.
//   - stats.go: summaries, Student-t intervals, Fieller ratios; table.go and
//     markdown.go text and Markdown tables.
//   - reference.go: the articles' numbers (data/reference) and claims;
//     package ledger judges every claim of both articles (data/claims).
//   - sensitivity.go: which conclusions survive the ASSUME ranges.
//   - charts.go, display.go, report.go: go-echarts charts, inline display in
//     GoNB, self-contained HTML reports; nbexport executes notebooks headless.
//   - validate.go: the models against published measurements (lab
//     validate); calibrate.go and profile.go fit ASSUME parameters to a
//     board's measurements and apply the fitted profile.
//   - platform.go: parameters grouped by platform, for tables and the README.
//
// A run that fails (a simulated deadlock at one parameter point) does not
// sink the experiment: its error is kept in the Result (Run.Err), left out
// of the statistics and shown in the tables, claims and reports. Runs are
// deterministic, so a failed run is cached like the others, and every call
// returning it says so with a *RunsFailedError.
package labkit
