package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"synclab/labkit"
	"synclab/labkit/internal/atomicfile"
	"synclab/labkit/internal/plural"
	"synclab/platforms"
)

// runFlags are lab run's flags.
type runFlags struct {
	sets, sweeps, variants                multi
	seed, report, csv, shard, result, dir string
	profile, trace                        string
	repeats, workers                      int
	asJSON, runs, fresh                   bool
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stdout)
	var f runFlags
	fs.Var(&f.sets, "set", "override a parameter: -set key=value (repeatable)")
	fs.Var(&f.sweeps, "sweep", "sweep a parameter: -sweep key=v1,v2,... (repeatable: a grid, the last varying fastest; replaces the experiment's sweep of key; every point runs with the same seeds)")
	fs.Var(&f.variants, "variant", "run only this variant (repeatable)")
	fs.StringVar(&f.seed, "seed", "", "experiment `seed`, a 64-bit unsigned integer (default: the experiment's)")
	fs.IntVar(&f.repeats, "repeats", 0, "repeats per variant and sweep point, at least 1 (default: the experiment's)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object on stdout (schema synclab.run/v1)")
	fs.BoolVar(&f.runs, "runs", false, "with -json: also list every run with its seed and metric values")
	fs.StringVar(&f.csv, "csv", "", "write one CSV row per run to this file (- for stdout)")
	fs.StringVar(&f.report, "o", "", "write a self-contained HTML report to this file")
	fs.StringVar(&f.trace, "trace", "", "record repeat 0 of every variant and sweep point and write every core's timeline to `FILE` (- for stdout) in the Trace Event Format, which Perfetto (ui.perfetto.dev) opens (gzipped when FILE ends in .gz); the runs are computed again and not stored")
	fs.StringVar(&f.shard, "shard", "", "compute share i/n of the runs and write a partial result file")
	fs.StringVar(&f.result, "result", "", "result file to read and write instead of the store (resumed from FILE.journal)")
	fs.StringVar(&f.dir, "results", "", "result store directory (default $SYNCLAB_RESULTS, data/results in the repository, else the user cache)")
	fs.BoolVar(&f.fresh, "fresh", false, "ignore results in the store and the runs of an interrupted run")
	fs.IntVar(&f.workers, "workers", 0, "parallel runs (0: GOMAXPROCS)")
	fs.StringVar(&f.profile, "profile", "", "apply a board profile written by lab calibrate -o (-set overrides it)")
	fs.Usage = func() {
		fmt.Fprint(stdout, "usage: lab run NAME [flags]\nlab run NAME -h also lists NAME's parameters (the -set keys) and variants.\n\nflags:\n")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return experimentHelp(stdout, pos, args, err)
	}
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return badInput("usage: lab run NAME [flags]; see lab list for names")
	case len(pos) > 1:
		return extraArgs("run "+pos[0], pos[1:], "one experiment per lab run; flags go after its NAME")
	}
	repeatsSet := false
	fs.Visit(func(fl *flag.Flag) { repeatsSet = repeatsSet || fl.Name == "repeats" })
	if repeatsSet && f.repeats < 1 {
		return badInput("-repeats %d: want at least 1", f.repeats)
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	e, err := experimentFromFlags(pos[0], f.sets, f.variants, f.seed, f.repeats)
	if err != nil {
		return err
	}
	if f.trace != "" && !e.Traces {
		var traced []string
		for _, x := range experiments() {
			if x.Traces {
				traced = append(traced, x.Name)
			}
		}
		return badInput("-trace: %s records no trace (its runs draw no timeline); these do: %s", e.Name, strings.Join(traced, ", "))
	}
	if f.profile != "" {
		p, err := labkit.LoadProfile(f.profile)
		if err != nil {
			return usageError{err}
		}
		if e, err = p.Apply(e); err != nil {
			return usageError{err}
		}
		if keys := p.Unpinned(e); len(keys) > 0 {
			var at []string
			for _, k := range keys {
				at = append(at, fmt.Sprintf("%s (the fit ran with %s)", k, labkit.Num(p.Fit.Params[k].Value)))
			}
			fmt.Fprintf(stderr, "profile %s: cited value kept for %s, not pinned by its measurements: the values it applies were fitted beside those, so this run is not the fit's model\n", p.Name, strings.Join(at, ", "))
		}
		if e, err = e.WithSettings(f.sets...); err != nil { // -set wins over the profile
			return usageError{err}
		}
	}
	if e, err = withSweeps(e, f.sweeps, f.sets); err != nil {
		return err
	}
	opts := labkit.RunOptions{Fresh: f.fresh, Workers: f.workers, Log: stderr, Dir: f.dir, File: f.result, Progress: terminalProgress(stderr),
		Trace: f.trace != ""}
	if f.shard != "" {
		if opts.Shard, err = labkit.ParseShard(f.shard); err != nil {
			return usageError{err}
		}
	}
	if f.result != "" {
		if err := checkResultFile(f.result, e, opts.Shard, stderr); err != nil {
			return badInput("-result: %v", err)
		}
	}
	start := time.Now()
	res, err := labkit.RunExperiment(ctx, e, opts)
	// Failed runs (a *RunsFailedError) come with the other runs' result:
	// show it, then exit with status 1 through runErr.
	var failed *labkit.RunsFailedError
	runErr := err
	if err != nil && (res == nil || !errors.As(err, &failed) || errors.Is(err, context.Canceled)) {
		if res != nil && errors.Is(err, context.Canceled) {
			if len(res.Runs) > 0 {
				fmt.Fprintf(stderr, "interrupted: %s finished (kept: the same command resumes from them)\n", plural.Count(len(res.Runs), "run"))
				labkit.SummaryTable(res).WriteText(stdout)
			}
		}
		return err
	}
	wall := time.Since(start).Seconds()
	if opts.Shard.Count > 1 {
		return printShard(stdout, res, opts, runErr)
	}
	if f.report != "" {
		if err := writeReport(stderr, labkit.ResultReport(res), f.report); err != nil {
			return err
		}
	}
	if f.csv != "" {
		if err := writeCSV(stdout, f.csv, res); err != nil {
			return err
		}
	}
	if f.trace != "" {
		if err := writeTrace(ctx, stdout, f.trace, res); err != nil {
			return err
		}
		if f.trace != "-" {
			fmt.Fprintf(stderr, "trace written to %s (open it in ui.perfetto.dev)\n", f.trace)
		}
	}
	if res.From != "" && (f.asJSON || f.csv == "-" || f.trace == "-") { // stdout is data: say it on stderr
		fmt.Fprintln(stderr, fromStore(res))
	}
	switch {
	case f.asJSON:
		doc := labkit.NewRunDoc(res, f.runs)
		doc.WallS = wall
		if err := doc.WriteJSON(stdout); err != nil {
			return err
		}
	case f.csv != "-" && f.trace != "-":
		printResult(stdout, res, wall, 1)
	}
	return runErr
}

// writeTrace writes res's traces to path (lab run -trace; - for stdout),
// gzipped when the name ends in .gz: the JSON runs to hundreds of megabytes
// for a sweep, so it goes straight to the file rather than through memory,
// and Perfetto opens the compressed file as it is.
func writeTrace(ctx context.Context, stdout io.Writer, path string, res *labkit.Result) error {
	if path == "-" {
		return labkit.WriteChromeTrace(stdout, res)
	}
	return atomicfile.WriteFunc(ctx, path, 0o644, func(w io.Writer) error {
		if !strings.HasSuffix(path, ".gz") {
			return labkit.WriteChromeTrace(w, res)
		}
		// The fastest level: a lock-scaling sweep's 158 MB give 18 MB in 2.7 s
		// of lab run, where the default level gives 13 MB in 4.4 s.
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level: no error
		if err := labkit.WriteChromeTrace(zw, res); err != nil {
			return err
		}
		return zw.Close()
	})
}

// check rejects flag combinations that would silently drop an output, and
// output paths that are not regular files, before any work.
func (f runFlags) check() error {
	switch {
	case f.shard != "" && (f.report != "" || f.asJSON || f.csv != "" || f.trace != ""):
		return badInput("-shard writes the shard's result file only (-result); -o, -json, -csv and -trace need every run: lab merge the shards (lab merge -json prints the merged result; lab run then reads it from the store)")
	case f.trace != "" && f.result != "":
		return badInput("-trace computes the runs again and keeps them out of result files (a trace is never stored): drop -result, or run without -trace")
	case f.runs && !f.asJSON:
		return badInput("-runs lists the runs in the JSON output: add -json")
	case f.asJSON && f.csv == "-":
		return badInput("-json and -csv - both write stdout: give -csv a file")
	case f.trace == "-" && (f.asJSON || f.csv == "-"):
		return badInput("-trace - writes the trace to stdout, and so does -json or -csv -: give -trace a file")
	}
	for _, out := range []struct{ flag, path string }{{"-o", f.report}, {"-csv", f.csv}, {"-result", f.result}, {"-trace", f.trace}} {
		if out.path == "" || out.path == "-" && (out.flag == "-csv" || out.flag == "-trace") {
			continue
		}
		if err := labkit.CheckOutput(out.path); err != nil {
			return badInput("%s: %v", out.flag, err)
		}
	}
	dir, name := f.dir, "-results "
	if dir == "" {
		dir, name = os.Getenv("SYNCLAB_RESULTS"), "SYNCLAB_RESULTS="
	}
	if dir != "" {
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return badInput("%s%s: not a directory (a result store is one; -result names one file)", name, dir)
		}
	}
	return nil
}

// checkResultFile refuses to overwrite an existing file that is not a
// result file, or that holds another experiment's result or another shard of
// this one: a mistyped -result (or lab merge -o) path would lose it. A result of this
// experiment at other settings is what -result is for: it is replaced, said
// on note with what differs.
func checkResultFile(path string, e platforms.Experiment, shard labkit.Shard, note io.Writer) error {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(file, head)
	file.Close()
	if n > 0 && !strings.HasPrefix("SYNCLABR", string(head[:n])) {
		return fmt.Errorf("%s exists and is not a SyncLab result file: refusing to overwrite it", path)
	}
	old, err := labkit.Load(path)
	if err != nil {
		return nil // damaged: the run says so and replaces it
	}
	switch {
	case old.Experiment.Name != e.Name:
		return fmt.Errorf("%s holds a result of %s, not %s: refusing to overwrite it (remove it or give another file)", path, old.Experiment.Name, e.Name)
	case old.Hash == e.Hash() && old.Shard != shard && shard.Count == 0:
		return fmt.Errorf("%s holds shard %s of this run: refusing to overwrite it with the whole result (give another file)", path, old.Shard)
	case old.Hash == e.Hash() && old.Shard != shard:
		return fmt.Errorf("%s holds shard %s of this run, not %s: refusing to overwrite it (give each shard its own file)", path, old.Shard, shard)
	case old.Hash != e.Hash():
		diff := old.Experiment.Diff(e)
		if len(diff) > 3 {
			diff = append(diff[:3], "...")
		}
		fmt.Fprintf(note, "lab: %s holds %s of %s at other settings (%s): replacing it\n", path, shardWords(old.Shard), e.Name, strings.Join(diff, "; "))
	}
	return nil
}

// shardWords is "the result" or "shard i/n".
func shardWords(s labkit.Shard) string {
	if s.Count == 0 {
		return "the result"
	}
	return "shard " + s.String()
}

// printShard says where a shard's result went.
func printShard(w io.Writer, res *labkit.Result, opts labkit.RunOptions, runErr error) error {
	path := opts.File
	switch {
	case res.From != "":
		path = res.From + " (from the store)"
	case path != "":
	default:
		dir := opts.Dir
		if dir == "" {
			dir = labkit.ResultsDir()
		}
		path = labkit.CachePath(dir, res.Experiment, opts.Shard)
	}
	fmt.Fprintf(w, "shard %s of %s: %s written to %s\n", opts.Shard, res.Experiment.Name, plural.Count(len(res.Runs), "run"), path)
	if runErr != nil {
		labkit.FailuresTable(res).WriteText(w)
	}
	return runErr
}

// writeCSV writes res's runs as CSV to path, or to stdout for "-".
func writeCSV(stdout io.Writer, path string, res *labkit.Result) error {
	var b bytes.Buffer
	if err := res.WriteCSV(&b); err != nil {
		return err
	}
	if path == "-" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	return labkit.WriteFileAtomic(path, b.Bytes(), 0o644)
}

// experimentHelp answers lab run [NAME] -h: after the flags (printed by the
// flag package), NAME's description, parameters and variants. NAME is the
// positional argument before -h or, for lab run -h NAME, a later argument
// naming an experiment. It returns helpErr (exit status 0), or a usage error
// for an unknown NAME.
func experimentHelp(w io.Writer, pos, args []string, helpErr error) error {
	name := ""
	if len(pos) > 0 {
		name = pos[0]
	} else {
		for _, a := range args {
			if _, err := lookup(a); err == nil {
				name = a
				break
			}
		}
	}
	if name == "" {
		return helpErr
	}
	e, err := lookup(name)
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(w, "\n%s (platform %s): %s.\n%s per variant and sweep point, seed %d.\n", e.Name, e.Platform, strings.TrimSuffix(firstSentence(e.Description), "."), plural.Count(e.Repeats, "repeat"), e.Seed)
	for _, a := range e.Sweep {
		fmt.Fprintf(w, "sweeps %s over %s (-set %s=V runs that value only)\n", a.Param, platforms.FormatValues(a.Values), a.Param)
	}
	fmt.Fprintln(w)
	t := labkit.ParamsTable("parameters of "+e.Name+" (-set key=value; accepted: the values -set takes; plausible: the ASSUME range)", e.Params)
	t.Header[0], t.Header[1] = "key", "default"
	t.WriteText(w)
	fmt.Fprintln(w)
	labkit.VariantsTable(e).WriteText(w)
	var metrics []string
	for _, m := range e.Metrics {
		metrics = append(metrics, labkit.MetricLabel(m))
	}
	fmt.Fprintf(w, "\nmetrics: %s\n", strings.Join(metrics, ", "))
	return helpErr
}

// experimentFromFlags looks up name and applies the run flags.
func experimentFromFlags(name string, sets, variants []string, seed string, repeats int) (platforms.Experiment, error) {
	e, err := lookup(name)
	if err != nil {
		return e, usageError{err}
	}
	given := map[string]string{}
	for _, s := range sets {
		k, _, _ := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if prev, ok := given[k]; ok {
			return e, badInput("-set %s and -set %s: %s given twice", prev, s, k)
		}
		given[k] = s
	}
	if e, err = e.WithSettings(sets...); err != nil {
		return e, usageError{err}
	}
	if len(variants) > 0 {
		if e, err = e.WithVariants(variants...); err != nil {
			return e, usageError{err}
		}
	}
	if seed != "" {
		if e.Seed, err = strconv.ParseUint(seed, 0, 64); errors.Is(err, strconv.ErrRange) {
			return e, badInput("-seed %q: above the largest seed, 2^64-1 = 18446744073709551615", seed)
		} else if err != nil {
			return e, badInput("-seed %q: want a non-negative integer", seed)
		}
	}
	if repeats > 0 {
		e.Repeats = repeats
	}
	if _, err := labkit.RunCount(e); err != nil {
		return e, usageError{err}
	}
	return e, nil
}

// withSweeps adds the -sweep axes to e, after -set and the profile: a swept
// key takes the sweep's values, so setting it too is an error. It then
// checks that the values go together at every sweep point.
func withSweeps(e platforms.Experiment, sweeps, sets []string) (platforms.Experiment, error) {
	seen := map[string]bool{}
	for _, s := range sweeps {
		key, list, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return e, badInput("-sweep %q: want key=v1,v2,...; keys: %s", s, strings.Join(e.Params.Keys(), ", "))
		}
		if seen[key] {
			return e, badInput("-sweep %s given twice", key)
		}
		seen[key] = true
		for _, set := range sets {
			if k, _, _ := strings.Cut(set, "="); strings.TrimSpace(k) == key {
				return e, badInput("-set %s and -sweep %s: a swept parameter takes the sweep's values", set, s)
			}
		}
		var values []float64
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return e, badInput("-sweep %s: value %q is not a number", key, f)
			}
			values = append(values, v)
		}
		var err error
		if e, err = e.WithSweep(key, values...); err != nil {
			return e, usageError{err}
		}
	}
	if _, err := labkit.RunCount(e); err != nil {
		return e, usageError{err}
	}
	if err := e.CheckPoints(); err != nil {
		return e, usageError{err}
	}
	return e, nil
}

// fromStore says which store entry res came from, and when it was computed.
func fromStore(res *labkit.Result) string {
	return fmt.Sprintf("from the store: %s (computed %s in %.3g s)", res.From, res.Created.Local().Format(time.DateTime), res.WallS)
}

// printResult prints the summary table, the failed runs if any, and the
// claims table; when every run failed, the failed runs alone (the tables
// would be empty).
func printResult(w io.Writer, res *labkit.Result, wall float64, shards int) {
	e := res.Experiment
	failed := res.Failures()
	runs := plural.Count(len(res.Runs), "run")
	if len(failed) > 0 {
		runs += fmt.Sprintf(" (%d FAILED)", len(failed))
	}
	took := fmt.Sprintf("in %.3g s", wall)
	switch {
	case res.From != "":
		took = "loaded " + took
	case shards > 1: // run side by side, as a job array does: the longest is the wait
		took = fmt.Sprintf("computed in %d shards, the longest %.3g s", shards, wall)
	}
	fmt.Fprintf(w, "%s — %s\nseed %d, definition %s, code %s, %s %s\n", e.Name, e.Description, e.Seed, res.Hash, res.Code, runs, took)
	switch {
	case res.From != "":
		fmt.Fprintln(w, fromStore(res))
	case res.Reused > 0:
		fmt.Fprintf(w, "reused %d of %d runs from an interrupted run\n", res.Reused, len(res.Runs))
	}
	some := len(failed) < len(res.Runs)
	if some {
		fmt.Fprintln(w)
		labkit.SummaryTable(res).WriteText(w)
	}
	if len(failed) > 0 {
		fmt.Fprintln(w)
		labkit.FailuresTable(res).WriteText(w)
	}
	if claims := res.Claims(); len(claims) > 0 && some {
		fmt.Fprintln(w)
		labkit.ClaimsTable(claims).WriteText(w)
	}
}

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stdout)
	out := fs.String("o", "", "merged result file (default: the store entry that lab run reads)")
	dir := fs.String("results", "", "result store directory for the default -o")
	asJSON := fs.Bool("json", false, "print the merged result as one JSON object on stdout (schema synclab.run/v1)")
	runs := fs.Bool("runs", false, "with -json: also list every run with its seed and metric values")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return badInput("usage: lab merge FILES... [-o OUT] [-json [-runs]]")
	}
	if *runs && !*asJSON {
		return badInput("-runs lists the runs in the JSON output: add -json")
	}
	if *out != "" {
		if err := labkit.CheckOutput(*out); err != nil {
			return badInput("-o: %v", err)
		}
	}
	var parts []*labkit.Result
	for _, f := range files {
		if f == "" {
			return badInput("merge: an empty file name (a script's unset variable?)")
		}
		r, err := labkit.Load(f)
		if err != nil {
			return usageError{err}
		}
		parts = append(parts, r)
	}
	merged, err := labkit.Merge(parts...)
	if me := (*labkit.MergeError)(nil); errors.As(err, &me) {
		var named []string
		for _, i := range me.Parts {
			named = append(named, files[i])
		}
		return usageError{fmt.Errorf("%s: %w", strings.Join(named, " and "), err)}
	}
	if err != nil {
		return usageError{err}
	}
	failed := merged.RunsFailed() // shown with the result, then exit status 1
	path := *out
	if path != "" {
		if err := checkResultFile(path, merged.Experiment, labkit.Shard{}, stderr); err != nil {
			return badInput("-o: %v", err)
		}
	} else {
		d := *dir
		if d == "" {
			d = labkit.ResultsDir()
		}
		path = labkit.CachePath(d, merged.Experiment, labkit.Shard{})
	}
	if err := labkit.Save(path, merged); err != nil {
		return err
	}
	note := stdout
	if *asJSON {
		note = stderr
	}
	fmt.Fprintf(note, "merged %s (%s) into %s\n", plural.Count(len(parts), "shard"), plural.Count(len(merged.Runs), "run"), path)
	if *asJSON {
		doc := labkit.NewRunDoc(merged, *runs)
		doc.WallS = merged.WallS
		if err := doc.WriteJSON(stdout); err != nil {
			return err
		}
		return failed
	}
	fmt.Fprintln(stdout)
	printResult(stdout, merged, merged.WallS, len(parts))
	return failed
}

// writeReport writes r to path and says so on stderr, with a warning when
// its charts cannot be drawn (no local ECharts copy found): the page says it
// too, but a user of the CLI reads the terminal first.
func writeReport(stderr io.Writer, r *labkit.Report, path string) error {
	err := r.WriteFile(path)
	if err != nil && !errors.Is(err, labkit.ErrNoCharts) {
		return err
	}
	fmt.Fprintf(stderr, "report written to %s\n", path)
	if err != nil {
		fmt.Fprintf(stderr, "lab: warning: %v\n", err)
	}
	return nil
}
