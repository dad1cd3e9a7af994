package nbexport

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"synclab/labkit/internal/atomicfile"
	"synclab/labkit/internal/pool"
)

// Tags a notebook's cells may carry for the report.
const (
	// ShowCodeTag shows a code cell's source in the report (code is hidden
	// by default).
	ShowCodeTag = "show-code"
	// SummaryTag marks a cell whose Markdown outputs (computed
	// conclusions, labkit.MD) are repeated under the report's title.
	SummaryTag = "summary"
	// hideInputTag is what the export gives the cells whose code it hides.
	hideInputTag = "synclab-hide-input"
	// titleTag marks the cell the export adds for the title block (its
	// class celltag_synclab-title styles the summary).
	titleTag = "synclab-title"
	// cellTagPrefix+N tags the notebook's code cell number N (counting
	// every cell from 1, as the export's errors do): nbconvert writes tags
	// as classes, so the page says which cell drew each chart
	// (ChartsByCell).
	cellTagPrefix = "synclab-cell-"
)

// Options says how to export notebooks.
type Options struct {
	// OutDir receives NAME.html (and NAME.pdf) per notebook NAME.ipynb.
	OutDir string
	// Params runs every notebook with these parameter values (lab report
	// -p name=value): each must be a variable of the cell tagged
	// parameters, and the value must suit its type.
	Params map[string]string
	// ShowCode shows every code cell's source (by default only cells
	// tagged show-code show theirs).
	ShowCode bool
	// PDF also prints each report to PDF with headless Chromium.
	PDF bool
	// Code is the exporting program's code version, stamped when a
	// notebook runs no experiment.
	Code string
	// Defaults, when set, gives the catalog's parameter values of an
	// experiment, so that the stamp lists the values each run changed,
	// however the notebook changed them; without it the stamp lists what
	// the notebook passed to labkit.RunWith.
	Defaults func(experiment string) (map[string]float64, bool)
	// Jobs is how many notebooks execute at once (0: one per CPU).
	Jobs int
	// Progress, when set, hears when each notebook starts and, with the
	// files written, when it is done; notebooks run side by side, so
	// events of different notebooks interleave (never two calls at once).
	Progress func(Event)
}

// Event is the progress of an export.
type Event struct {
	Notebook     string
	Index, Total int
	// Files is nil when the notebook starts, the files written when done.
	Files   []string
	Elapsed time.Duration
	// Note, when set, is a remark made while the notebook runs (its
	// kernel died while starting and is started again); Files is nil.
	Note string
}

// BadInputError is an export refused before any work: a missing or broken
// notebook, a bad -p, an output path that is not a directory.
type BadInputError struct{ Err error }

// Error is the wrapped error's message.
func (e *BadInputError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *BadInputError) Unwrap() error { return e.Err }

func badInput(format string, args ...any) error {
	return &BadInputError{fmt.Errorf(format, args...)}
}

// Validate checks notebooks and options before any work: every notebook
// exists and parses, no two write the same report, every -p names a
// parameter of every notebook with a value of its type, and the output
// directory is one (or can be made). Its errors are *BadInputError.
func Validate(notebooks []string, opts Options) error {
	if len(notebooks) == 0 {
		return badInput("no notebook given")
	}
	if opts.OutDir == "" {
		return badInput("no output directory given (-o DIR)")
	}
	if fi, err := os.Stat(opts.OutDir); err == nil && !fi.IsDir() {
		return badInput("-o %s: not a directory (reports are written into a directory, one NAME.html per notebook)", opts.OutDir)
	}
	byOut := map[string]string{}
	for _, path := range notebooks {
		nb, err := readNotebook(path)
		if err != nil {
			return err
		}
		out := OutputPath(path, opts.OutDir)
		if prev, ok := byOut[out]; ok {
			return badInput("notebooks %s and %s would both write %s: export them to different directories", prev, path, out)
		}
		byOut[out] = path
		if err := nb.SetParameters(opts.Params); err != nil {
			return badInput("notebook %s: %v", path, err)
		}
	}
	return nil
}

// readNotebook reads and parses a notebook file; errors are bad input.
func readNotebook(path string) (*Notebook, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, badInput("notebook %s: no such file", path)
	case err != nil:
		return nil, badInput("notebook %s: %v", path, err)
	case fi.IsDir():
		return nil, badInput("notebook %s: a directory, not a notebook", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("notebook %s: %v", path, err)
	}
	nb, err := ParseNotebook(b)
	if err != nil {
		return nil, badInput("notebook %s: %v", path, err)
	}
	return nb, nil
}

// Preflight checks, before any work, what Export needs: the notebooks and
// options (Validate), nbconvert, the kernel's tools and the chart assets,
// and chromium with opts.PDF. It returns the tools found.
func Preflight(notebooks []string, opts Options) (Tools, error) {
	if err := Validate(notebooks, opts); err != nil {
		return Tools{}, err
	}
	if _, err := exec.LookPath("jupyter-nbconvert"); err != nil {
		return Tools{}, errors.New("jupyter-nbconvert not found on PATH: run make setup (scripts/setup.sh; Debian: apt-get install jupyter-nbconvert jupyter-notebook)")
	}
	tools, err := FindTools(notebooks...)
	if err != nil {
		return Tools{}, err
	}
	if err := tools.checkAssets(); err != nil {
		return Tools{}, err
	}
	if opts.PDF && ChromiumPath() == "" {
		return Tools{}, errors.New("-pdf needs chromium: run make setup-test (apt-get install chromium) or set SYNCLAB_CHROMIUM")
	}
	return tools, nil
}

// Export executes each notebook headless and writes OutDir/NAME.html: a
// self-contained report (no network) with code hidden unless asked for,
// a title block (title, when, what ran, parameters, contents), the
// summary, and a reproducibility stamp at the end; and NAME.pdf with
// opts.PDF. It checks everything first (Validate), runs opts.Jobs
// notebooks at once, and stops at the first notebook that fails; the error
// names the notebook, the failing cell and its output.
func Export(ctx context.Context, notebooks []string, opts Options) error {
	tools, err := Preflight(notebooks, opts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return err
	}
	if err := warmBuildCache(ctx, tools); err != nil {
		return err
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	// Notebooks run side by side: a cell's compile and link use one core,
	// so another notebook's simulation fills the other.
	var mu sync.Mutex
	progress := func(ev Event) {
		if opts.Progress != nil {
			mu.Lock()
			defer mu.Unlock()
			opts.Progress(ev)
		}
	}
	return pool.Run(ctx, jobs, len(notebooks), longestFirst(notebooks), func(ctx context.Context, i int) error {
		nb := notebooks[i]
		start := time.Now()
		progress(Event{Notebook: nb, Index: i, Total: len(notebooks)})
		note := func(s string) { progress(Event{Notebook: nb, Index: i, Total: len(notebooks), Note: s}) }
		files, err := exportOne(ctx, tools, nb, opts, note)
		if err != nil {
			return err
		}
		progress(Event{Notebook: nb, Index: i, Total: len(notebooks), Files: files, Elapsed: time.Since(start)})
		return nil
	})
}

// longestFirst orders notebooks for Export to start: those with the most
// code cells first (each cell is at least a compile and a link), so that
// a long one does not start last and run alone.
func longestFirst(notebooks []string) []int {
	cost := make([]int, len(notebooks))
	for i, path := range notebooks {
		if nb, err := readNotebook(path); err == nil { // Validate has read it
			for _, c := range nb.Cells {
				if c.Type() == "code" {
					cost[i]++
				}
			}
		}
	}
	order := make([]int, len(notebooks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost[b] - cost[a] })
	return order
}

// startAttempts is how many times an export starts a notebook's kernel when it dies while
// starting. That can happen for reasons outside the notebook: jupyter_client picks a kernel's five
// ports by binding and closing them, so two kernels starting side by side can race for one
// (jupyter/nbconvert issue 1066, "zmq.error.ZMQError: Address already in use"). Such a kernel ran
// no cell, so starting the notebook again is safe.
const startAttempts = 3

// execute runs the prepared notebook in into out/executed.ipynb, with the kernel's session records
// in session; it starts it again (saying so to note) while its kernel dies before it answers.
//
// The kernel's TMPDIR is out/tmp, which goes with out. GoNB makes a pair of named pipes there
// for every cell it runs, and it sometimes leaves them behind: when a cell's program ends before
// GoNB's goroutine opens the pipe, the goroutine that would remove it blocks opening the other
// end (internal/jpyexec/namedpipes.go in janpfeifer/gonb v0.11.5). In the system's /tmp they
// piled up with every export.
func execute(ctx context.Context, tools Tools, dir, in, out, session string, note func(string)) (string, error) {
	tmp := filepath.Join(out, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", err
	}
	for attempt := 1; ; attempt++ {
		log, err := nbconvert(ctx, tools, dir, in, true, []string{SessionEnv + "=" + session, "TMPDIR=" + tmp},
			"--to", "notebook", "--output-dir", out, "--output", "executed")
		if err == nil || ctx.Err() != nil || !diedStarting(log) || attempt == startAttempts {
			return log, err
		}
		note(fmt.Sprintf("the kernel died while starting (%s); starting it again, attempt %d of %d", kernelFatal(log), attempt+1, startAttempts))
		if err := os.Remove(session); err != nil && !errors.Is(err, os.ErrNotExist) {
			return log, err
		}
	}
}

// OutputPath returns the HTML path Export writes for a notebook.
func OutputPath(notebook, outDir string) string {
	return filepath.Join(outDir, strings.TrimSuffix(filepath.Base(notebook), filepath.Ext(notebook))+".html")
}

// exportOne runs one notebook in three steps: execute a prepared copy
// (parameters, markers around markdown, hidden code) into a notebook,
// finish it (title block, summary, stamp, no empty outputs) and convert it
// to HTML, which is made self-contained and safe.
func exportOne(ctx context.Context, tools Tools, path string, opts Options, note func(string)) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	nb, err := readNotebook(abs)
	if err != nil {
		return nil, err
	}
	source, _ := os.ReadFile(abs)
	_, params, err := nb.Parameters()
	if err != nil {
		return nil, err
	}
	nonce := newNonce()
	mdCells, err := prepare(nb, opts, nonce)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "nbexport-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The kernel runs in the notebook's folder, so that relative paths resolve.
	dir := filepath.Dir(abs)
	in := filepath.Join(tmp, "in.ipynb")
	if err := writeNotebook(in, nb); err != nil {
		return nil, err
	}
	session := filepath.Join(tmp, "session.jsonl")
	start := time.Now()
	log, err := execute(ctx, tools, dir, in, tmp, session, note)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: interrupted after %s: %w", path, time.Since(start).Round(time.Second), ctx.Err())
		}
		with := ""
		if len(opts.Params) > 0 { // the likeliest cause when the notebook runs as committed
			with = " with -p " + settings(opts.Params)
		}
		return nil, fmt.Errorf("%s%s: %s", path, with, diagnose(ctx, tools, dir, in, log))
	}
	raw, err := os.ReadFile(filepath.Join(tmp, "executed.ipynb"))
	if err != nil {
		return nil, fmt.Errorf("%s: nbconvert wrote no notebook: %w\n%s", path, err, tail(log, 20))
	}
	executed, err := ParseNotebook(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: the executed notebook: %w", path, err)
	}
	records, err := ReadSession(session)
	if err != nil {
		return nil, err
	}
	finish(executed, reportInfo{notebook: path, source: source, title: nb.Title(), params: params, set: opts.Params,
		records: records, code: opts.Code, when: start, defaults: opts.Defaults})
	executed.setTitle(cmp.Or(nb.Title(), strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))))
	final := filepath.Join(tmp, "final.ipynb")
	if err := writeNotebook(final, executed); err != nil {
		return nil, err
	}
	if log, err := nbconvert(ctx, tools, dir, final, false, nil, "--to", "html", "--no-prompt",
		"--TagRemovePreprocessor.enabled=True", `--TagRemovePreprocessor.remove_input_tags=["`+hideInputTag+`"]`,
		"--output-dir", tmp, "--output", "final"); err != nil {
		return nil, fmt.Errorf("%s: nbconvert to HTML: %v\n%s", path, err, tail(log, 20))
	}
	page, err := os.ReadFile(filepath.Join(tmp, "final.html"))
	if err != nil {
		return nil, err
	}
	if page, err = finishPage(tools, page, nonce, mdCells); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := OutputPath(path, opts.OutDir)
	if err := atomicfile.Write(ctx, out, page, 0o644); err != nil {
		return nil, err
	}
	if err := Check(page); err != nil {
		return nil, fmt.Errorf("%s (written to %s): %w", path, out, err)
	}
	files := []string{out}
	if opts.PDF {
		pdf := strings.TrimSuffix(out, ".html") + ".pdf"
		if err := PrintPDF(ctx, out, pdf); err != nil {
			return files, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, pdf)
	}
	return files, nil
}

func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return hex.EncodeToString(b)
}

func writeNotebook(path string, nb *Notebook) error {
	b, err := nb.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// markdown markers wrap each markdown cell so that its rendered HTML can
// be found and sanitised; the nonce makes them unforgeable.
func mdBegin(nonce string) string { return "synclabmdbegin" + nonce }
func mdEnd(nonce string) string   { return "synclabmdend" + nonce }

// prepare sets the parameters, wraps markdown cells in markers, tags each
// of the notebook's code cells with its number and the code cells whose
// source the report hides; it returns the number of markdown cells.
func prepare(nb *Notebook, opts Options, nonce string) (int, error) {
	if err := nb.SetParameters(opts.Params); err != nil {
		return 0, badInput("%v", err)
	}
	n, num := 0, 0
	for _, c := range nb.Cells {
		injected := c.HasTag(InjectedTag) // lab report -p's, not the notebook's
		if !injected {
			num++
		}
		switch c.Type() {
		case "markdown":
			c["source"] = mdBegin(nonce) + "\n\n" + c.Source() + "\n\n" + mdEnd(nonce) + "\n"
			n++
		case "code":
			if !injected {
				c.AddTag(cellTagPrefix + strconv.Itoa(num))
			}
			if !opts.ShowCode && !c.HasTag(ShowCodeTag) {
				c.AddTag(hideInputTag)
			}
		}
	}
	return n, nil
}

// finish readies an executed notebook for HTML: empty outputs (cleared
// progress lines) and code cells left with nothing to show go, the title
// block (with the summary) opens it, the stamp ends it.
func finish(nb *Notebook, ri reportInfo) {
	var cells []Cell
	var summary []map[string]any
	for _, c := range nb.Cells {
		if c.Type() != "code" {
			cells = append(cells, c)
			continue
		}
		outs := keptOutputs(c.Outputs())
		c.setOutputs(outs)
		if c.HasTag(SummaryTag) {
			for _, o := range outs {
				if data, _ := o["data"].(map[string]any); data["text/markdown"] != nil {
					summary = append(summary, o)
				}
			}
		}
		if len(outs) == 0 && c.HasTag(hideInputTag) {
			continue
		}
		cells = append(cells, c)
	}
	if ri.title != "" { // the title block shows it
		for _, c := range cells {
			if c.Type() == "markdown" {
				c["source"] = dropTitle(c.Source(), ri.title)
				break
			}
		}
	} else {
		ri.title = strings.TrimSuffix(filepath.Base(ri.notebook), filepath.Ext(ri.notebook))
	}
	head := []map[string]any{htmlOutput(titleBlockHTML(ri))}
	if len(summary) > 0 {
		head = append(head, htmlOutput(`<p class="synclab-summary-title">Summary</p>`))
		head = append(head, summary...)
	}
	head = append(head, htmlOutput(tocHTML))
	cells = append([]Cell{codeCell("synclab-title", "", []string{hideInputTag, titleTag}, head...)}, cells...)
	nb.Cells = append(cells, codeCell("synclab-stamp", "", []string{hideInputTag}, htmlOutput(stampHTML(ri))))
}

// dropTitle removes the line "# title" from markdown.
func dropTitle(md, title string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "# "+title {
			return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
		}
	}
	return md
}

// keptOutputs drops outputs with nothing to show (a progress line cleared
// when it finished leaves an empty display) and the kernel's log lines.
func keptOutputs(outs []map[string]any) []map[string]any {
	var kept []map[string]any
	for _, o := range outs {
		switch o["output_type"] {
		case "stream":
			text, _ := sourceText(o["text"])
			if o["name"] == "stderr" {
				var lines []string
				for _, l := range strings.SplitAfter(text, "\n") {
					if !klogLine.MatchString(l) {
						lines = append(lines, l)
					}
				}
				text = strings.Join(lines, "")
				o["text"] = text
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
		case "display_data", "execute_result":
			data, _ := o["data"].(map[string]any)
			empty := true
			for _, v := range data {
				if s, ok := sourceText(v); !ok || strings.TrimSpace(s) != "" {
					empty = false
				}
			}
			if empty {
				continue
			}
		}
		kept = append(kept, o)
	}
	return kept
}
