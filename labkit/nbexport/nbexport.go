// Package nbexport executes GoNB notebooks headless and writes self-contained HTML reports.
//
// Export (export.go) checks its input first (Validate), then, per notebook: prepares a copy
// (parameters.go: lab report -p values injected after the cell tagged parameters; markdown cells
// between unforgeable markers; code cells to hide tagged), executes it with `jupyter nbconvert
// --execute --to notebook` on the repository's GoNB kernel (installed by scripts/setup.sh in
// <repo>/.tools/jupyter) with a session log in which labkit notes every experiment run
// (session.go), finishes the executed notebook (no empty outputs, a title block with the summary,
// a reproducibility stamp: stamp.go) and converts it to HTML. The page (page.go) then gets
// nbconvert's require.js and MathJax inlined from <repo>/.tools (MathJax only when the page
// contains math), its markdown sanitised (sanitize.go), its table of contents and its styles. The
// charts' ECharts library is inlined by labkit's display code. Check verifies a page needs no
// external script; Chromium (chromium.go) verifies that every chart is drawn with the network off,
// naming the cell of one that is not (the export tags each code cell with its number, which
// ChartsByCell reads back from the page), and prints reports to PDF.
package nbexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kernelName is the Jupyter kernel the notebooks run on.
const kernelName = "gonb"

// defaultCellTimeout bounds the execution of one cell; SYNCLAB_CELL_TIMEOUT (seconds) overrides it.
const defaultCellTimeout = 10 * time.Minute

// Placeholders given to nbconvert as asset URLs and replaced by inlined scripts afterwards.
const (
	requireJSPlaceholder = "synclab-inline:require.js"
	mathJaxPlaceholder   = "synclab-inline:mathjax.js"
)

// Tools locates what a headless run needs: the repository root holding .tools (built by
// scripts/setup.sh).
type Tools struct {
	Root string // repository root; .tools lives under it
}

// Dir returns <root>/.tools.
func (t Tools) Dir() string { return filepath.Join(t.Root, ".tools") }

// kernelSpec returns the path of the repo-local GoNB kernel spec.
func (t Tools) kernelSpec() string {
	return filepath.Join(t.Dir(), "jupyter", "kernels", kernelName, "kernel.json")
}

// FindTools looks for a repository set up by scripts/setup.sh: $SYNCLAB_ROOT if set, else the
// first directory at or above each of the given paths (and then the working directory) that holds
// .tools/jupyter/kernels/gonb/kernel.json.
func FindTools(near ...string) (Tools, error) {
	if r := os.Getenv("SYNCLAB_ROOT"); r != "" {
		t := Tools{Root: r}
		if _, err := os.Stat(t.kernelSpec()); err != nil {
			return Tools{}, fmt.Errorf("SYNCLAB_ROOT=%s: no GoNB kernel at %s: run scripts/setup.sh (or make lab) there first", r, t.kernelSpec())
		}
		return t, nil
	}
	if wd, err := os.Getwd(); err == nil {
		near = append(near, wd)
	}
	for _, p := range near {
		dir, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
		for {
			t := Tools{Root: dir}
			if _, err := os.Stat(t.kernelSpec()); err == nil {
				return t, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return Tools{}, errors.New("nbexport: no SyncLab setup found (.tools/jupyter/kernels/gonb/kernel.json) at or above the notebooks or the working directory: run scripts/setup.sh (make lab) in the repository, or set SYNCLAB_ROOT")
}

// offlineAssets are the scripts a report inlines, under .tools: without them a report would need
// the network, so an export refuses to start (no unverified download as a fallback).
var offlineAssets = []string{"echarts/echarts.min.js", "requirejs/require.js", "mathjax/tex-svg.js"}

// checkAssets reports the first offline asset missing, with the command that fetches them
// (integrity-checked).
func (t Tools) checkAssets() error {
	for _, a := range offlineAssets {
		if _, err := os.Stat(filepath.Join(t.Dir(), filepath.FromSlash(a))); err != nil {
			return fmt.Errorf("%s is missing (reports work offline and never load scripts from the network): run make setup (scripts/setup.sh) in %s", filepath.Join(".tools", a), t.Root)
		}
	}
	return nil
}

// Env returns the environment for jupyter: the repository's tools first on PATH and its kernels
// first on JUPYTER_PATH, the one for reports before the interactive one.
func (t Tools) Env() []string {
	env := os.Environ()
	set := func(k, v string) {
		for i, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				env[i] = k + "=" + v
				return
			}
		}
		env = append(env, k+"="+v)
	}
	prepend := func(k, dir string) {
		if old := os.Getenv(k); old != "" {
			set(k, dir+string(os.PathListSeparator)+old)
		} else {
			set(k, dir)
		}
	}
	prepend("PATH", filepath.Join(t.Dir(), "bin"))
	// jupyter-report holds the same kernel without gopls on its PATH (scripts/setup.sh):
	// nobody asks a headless run for completions, and gopls re-checks the workspace after
	// every cell.
	prepend("JUPYTER_PATH", filepath.Join(t.Dir(), "jupyter-report")+string(os.PathListSeparator)+filepath.Join(t.Dir(), "jupyter"))
	set("SYNCLAB_ROOT", t.Root)
	set("SYNCLAB_ECHARTS", filepath.Join(t.Dir(), "echarts", "echarts.min.js"))
	set("PYTHONUNBUFFERED", "1")
	return env
}

func cellTimeout() time.Duration {
	if s := os.Getenv("SYNCLAB_CELL_TIMEOUT"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return defaultCellTimeout
}

// runMarkerEnv marks the processes of one nbconvert run (nbconvert, the kernel, its children).
const runMarkerEnv = "SYNCLAB_NBEXPORT_RUN"

// killMarked kills the processes whose environment carries this run's marker (Linux /proc; a no-op
// elsewhere). Only processes started by this run can carry it.
func killMarked(marker string) {
	want := []byte(runMarkerEnv + "=" + marker + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// nbconvert runs jupyter nbconvert on the notebook file in with the kernel and asset settings,
// executing it when execute is set, with env added to the environment; it returns stderr. The
// notebook goes in on stdin, so the kernel runs in dir (where the notebook's relative paths
// resolve) while the file itself stays out of dir: a read-only checkout exports, and a killed
// export leaves nothing behind in it.
func nbconvert(ctx context.Context, tools Tools, dir, in string, execute bool, env []string, args ...string) (string, error) {
	stdin, err := os.Open(in)
	if err != nil {
		return "", err
	}
	defer stdin.Close()
	base := []string{
		"--stdin",
		"--ExecutePreprocessor.kernel_name=" + kernelName,
		fmt.Sprintf("--ExecutePreprocessor.timeout=%d", int(cellTimeout().Seconds())),
		"--HTMLExporter.require_js_url=" + requireJSPlaceholder,
		"--HTMLExporter.mathjax_url=" + mathJaxPlaceholder,
	}
	if execute {
		base = append(base, "--execute")
	}
	name, pre := nbconvertCommand()
	cmd := exec.CommandContext(ctx, name, append(append(pre, base...), args...)...)
	cmd.Dir, cmd.Stdin = dir, stdin
	// The kernel runs in its own session (jupyter_client starts it with setsid), so it cannot be
	// reached through nbconvert's process group. Mark everything this run starts with a unique
	// environment variable; after nbconvert ends, whatever still carries the mark is a leftover.
	marker := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd.Env = append(append(tools.Env(), env...), runMarkerEnv+"="+marker)
	// On cancellation, interrupt nbconvert first so nbclient shuts the kernel down cleanly.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	err = cmd.Run()
	killMarked(marker)
	if ctx.Err() != nil {
		return stderr.String(), ctx.Err()
	}
	return stderr.String(), err
}

// nbconvertCommand returns the program and leading arguments that start nbconvert: `PYTHON -m
// nbconvert`, with the interpreter named on the first line of the jupyter-nbconvert script on PATH,
// else `jupyter nbconvert`. That takes 1.5 s to start (jupyter execs jupyter-nbconvert, whose
// Debian entry script looks nbconvert up among every installed distribution), -m 0.8-1.0 s, and
// an export starts nbconvert twice per notebook.
func nbconvertCommand() (string, []string) {
	if script, err := exec.LookPath("jupyter-nbconvert"); err == nil {
		if python := interpreter(script); python != "" {
			return python, []string{"-m", "nbconvert"}
		}
	}
	return "jupyter", []string{"nbconvert"}
}

// interpreter returns the program a "#!/path/to/python3" script runs on, if it is a Python that
// exists; "" otherwise (a binary, an env-style or a missing interpreter).
func interpreter(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	python, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	python = strings.TrimSpace(python)
	if !ok || strings.ContainsAny(python, " \t") || !strings.HasPrefix(filepath.Base(python), "python") {
		return ""
	}
	if _, err := exec.LookPath(python); err != nil {
		return ""
	}
	return python
}

// cellErrorRE finds nbclient's CellExecutionError report: the cell source between dashed lines,
// then the kernel's error.
var cellErrorRE = regexp.MustCompile(`(?s)An error occurred while executing the following cell:\n-{18}\n(.*?)\n-{18}\n(.*)`)

// diagnose turns a failed nbconvert run into a message naming the failing cell and its output. The
// kernel's error reply only says "exit status 2": the real output (compiler errors, panics) is in the
// cell's outputs, so the notebook is re-run up to that cell with errors allowed to capture them.
func diagnose(ctx context.Context, tools Tools, dir, notebook, log string) string {
	m := cellErrorRE.FindStringSubmatch(log)
	if m == nil {
		if strings.Contains(log, "No such kernel named") {
			return "the GoNB kernel is not installed: run scripts/setup.sh\n" + tail(log, 10)
		}
		if diedStarting(log) {
			return fmt.Sprintf("the GoNB kernel died while starting, %d times, before it ran a cell (%s; nbclient: Kernel died before replying to kernel_info)", startAttempts, kernelFatal(log))
		}
		if strings.Contains(log, "Timeout") || strings.Contains(log, "timed out") {
			return fmt.Sprintf("a cell timed out (limit %s; SYNCLAB_CELL_TIMEOUT sets it in seconds)\n%s", cellTimeout(), tail(log, 15))
		}
		return "nbconvert failed:\n" + tail(log, 30)
	}
	source, reply := m[1], strings.TrimSpace(firstLines(m[2], 5))
	idx, outputs, err := failingCellOutputs(ctx, tools, dir, notebook, source)
	where := "a cell"
	if idx.valid() {
		where = fmt.Sprintf("cell %d (code cell #%d, counting from 1)", idx.cell, idx.code)
	}
	if p := panicLine.FindStringSubmatch(outputs); p != nil {
		reply = p[1] // the cause, where the reply only says "exit status 2"
	}
	msg := fmt.Sprintf("%s failed: %s\n--- cell source ---\n%s\n", where, reply, source)
	switch {
	case err != nil:
		msg += "--- (could not capture the cell's output: " + err.Error() + ")\n"
	case strings.TrimSpace(outputs) != "":
		msg += "--- cell output ---\n" + tail(outputs, 40) + "\n"
	}
	return msg
}

// panicLine finds the first line of a Go panic in a cell's output (labkit.Must panics with the
// error it stops the cell on).
var panicLine = regexp.MustCompile(`(?m)^(panic: .*)$`)

// diedStarting reports whether nbconvert's log says the kernel exited before it answered its first
// request, that is before it ran any cell (nbclient's message).
func diedStarting(log string) bool {
	return strings.Contains(log, "Kernel died before replying to kernel_info")
}

// klogFatal finds a kernel's fatal log line (GoNB logs with klog: F1201 15:04:05.000000 pid
// file:line] [kernel id] message) and its message.
var klogFatal = regexp.MustCompile(`(?m)^F\d{4} [^\]]*\] (?:\[[0-9a-f]+\] )?(.*)$`)

// kernelFatal returns what the kernel said when it exited: its last fatal log line (which the
// lines kept by tail leave out, with the rest of its log), or that it said nothing.
func kernelFatal(log string) string {
	m := klogFatal.FindAllStringSubmatch(stripANSI(log), -1)
	if m == nil {
		return "it logged no fatal error"
	}
	return "it said: " + strings.TrimSpace(m[len(m)-1][1])
}

// cellIndex numbers a cell among all cells and among code cells, from 1.
type cellIndex struct{ cell, code int }

func (c cellIndex) valid() bool { return c.cell >= 0 }

// failingCellOutputs re-executes the notebook up to the first code cell with the given source
// (errors allowed) and returns the text of that cell's outputs. Cell numbers count the notebook's
// own cells (not one lab report -p adds).
func failingCellOutputs(ctx context.Context, tools Tools, dir, notebook, source string) (cellIndex, string, error) {
	none := cellIndex{-1, -1}
	raw, err := os.ReadFile(notebook)
	if err != nil {
		return none, "", err
	}
	nb, err := ParseNotebook(raw)
	if err != nil {
		return none, "", err
	}
	idx, ci := -1, cellIndex{0, 0}
	for i, c := range nb.Cells {
		if c.HasTag(InjectedTag) {
			continue
		}
		ci.cell++
		if c.Type() != "code" {
			continue
		}
		ci.code++
		if strings.TrimSpace(c.Source()) == strings.TrimSpace(source) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return none, "", errors.New("failing cell not found in the notebook")
	}
	nb.Cells = nb.Cells[:idx+1]
	tmp, err := os.MkdirTemp("", "nbexport-diag-")
	if err != nil {
		return ci, "", err
	}
	defer os.RemoveAll(tmp)
	in := filepath.Join(tmp, "in.ipynb")
	if err := writeNotebook(in, nb); err != nil {
		return ci, "", err
	}
	// Run in dir, as the failed run was, so relative paths resolve the same,
	// and headless as it was: a notebook that shows widgets to a browser
	// (labkit.Headless false) would wait for one that never connects.
	env := []string{SessionEnv + "=" + filepath.Join(tmp, "session.jsonl"), "TMPDIR=" + tmp}
	if log, err := nbconvert(ctx, tools, dir, in, true, env, "--to", "notebook", "--allow-errors",
		"--output-dir", tmp, "--output", "out"); err != nil {
		return ci, "", fmt.Errorf("%v\n%s", err, tail(log, 10))
	}
	outRaw, err := os.ReadFile(filepath.Join(tmp, "out.ipynb"))
	if err != nil {
		return ci, "", err
	}
	executed, err := ParseNotebook(outRaw)
	if err != nil {
		return ci, "", err
	}
	if len(executed.Cells) <= idx {
		return ci, "", errors.New("re-run lost the failing cell")
	}
	var b strings.Builder
	for _, o := range executed.Cells[idx].Outputs() {
		switch o["output_type"] {
		case "stream":
			t, _ := sourceText(o["text"])
			b.WriteString(t)
		case "error":
			fmt.Fprintf(&b, "%v: %v\n", o["ename"], o["evalue"])
		default:
			data, _ := o["data"].(map[string]any)
			if t, ok := sourceText(data["text/plain"]); ok && t != "" {
				b.WriteString(t + "\n")
			} else if h, ok := sourceText(data["text/html"]); ok && h != "" {
				b.WriteString(htmlToText(h) + "\n")
			}
		}
	}
	return ci, stripANSI(b.String()), nil
}

var (
	tagRE       = regexp.MustCompile(`(?s)<[^>]*>`)
	blankLines  = regexp.MustCompile(`\n\s*\n+`)
	ansiRE      = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	errContextR = regexp.MustCompile(`(?s)<div class="gonb-err-context">.*?</div>`)
	klogLine    = regexp.MustCompile(`^[IWEF]\d{4} \d`) // a kernel log line: I0102 15:04...
)

// htmlToText reduces an HTML output (such as GoNB's error display) to its text.
func htmlToText(h string) string {
	h = scriptOrStyle.ReplaceAllString(h, "")
	h = errContextR.ReplaceAllString(h, "")
	h = strings.NewReplacer("<br>", "\n", "<br/>", "\n", "</div>", "\n", "</p>", "\n").Replace(h)
	// &nbsp; as a plain space, as a terminal shows it.
	h = strings.ReplaceAll(html.UnescapeString(tagRE.ReplaceAllString(h, "")), "\u00a0", " ")
	return strings.TrimSpace(blankLines.ReplaceAllString(h, "\n"))
}

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// tail returns the last n lines of s, leaving out the kernel's log lines (klog) but its fatal ones,
// which say why it exited.
func tail(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(stripANSI(s), "\n") {
		if klogLine.MatchString(l) && l[0] != 'F' {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
