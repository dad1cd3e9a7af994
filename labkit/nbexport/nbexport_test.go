package nbexport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"synclab"
)

// e2e reports whether make test asked for the end-to-end tests: then every check runs or fails; a
// missing Jupyter, kernel, setup or Chromium is a failure, not a skip.
func e2e() bool { return os.Getenv("SYNCLAB_E2E") == "1" }

// missing skips the test (or, under SYNCLAB_E2E=1, fails it) because why is missing.
func missing(t *testing.T, why string) {
	t.Helper()
	if e2e() {
		t.Fatalf("SYNCLAB_E2E=1 but %s (make setup-test, scripts/setup.sh --test, installs it)", why)
	}
	t.Skip(why + "; run scripts/setup.sh --test and set SYNCLAB_E2E=1 to require this test")
}

// needSetup returns the repository's setup (.tools), skipping or failing (missing) without it.
func needSetup(t *testing.T) Tools {
	t.Helper()
	tools, err := FindTools()
	if err != nil {
		missing(t, err.Error())
	}
	return tools
}

// needJupyter returns the setup when Jupyter can execute notebooks (else missing). The notebooks
// the test executes store their results in a directory of the test's own, never data/results, so
// they always simulate.
func needJupyter(t *testing.T) Tools {
	t.Helper()
	if _, err := exec.LookPath("jupyter-nbconvert"); err != nil {
		missing(t, "jupyter-nbconvert is not installed")
	}
	tools := needSetup(t)
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	return tools
}

// needChromium skips (or, under SYNCLAB_E2E=1, fails) when there is no Chromium.
func needChromium(t *testing.T) {
	t.Helper()
	if ChromiumPath() == "" {
		missing(t, "no chromium for the headless report check (apt-get install chromium, or set SYNCLAB_CHROMIUM)")
	}
}

func writeTestNotebook(t *testing.T, dir, name string, cells ...map[string]any) string {
	t.Helper()
	for i, c := range cells {
		c["id"] = "c" + string(rune('a'+i))
		if c["metadata"] == nil {
			c["metadata"] = map[string]any{}
		}
		if c["cell_type"] == "code" {
			c["outputs"] = []any{}
			c["execution_count"] = nil
		}
	}
	nb := map[string]any{
		"nbformat": 4, "nbformat_minor": 5,
		"metadata": map[string]any{"kernelspec": map[string]any{"name": "gonb", "display_name": "Go (gonb)", "language": "go"}},
		"cells":    cells,
	}
	b, err := json.Marshal(nb)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// exportPage exports notebook nb with the default options into out and returns its report.
func exportPage(t *testing.T, nb, out string) string {
	t.Helper()
	if err := Export(context.Background(), []string{nb}, Options{OutDir: out}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(OutputPath(nb, out))
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

func code(src string) map[string]any { return map[string]any{"cell_type": "code", "source": src} }

// tagged gives a test cell tags.
func tagged(c map[string]any, tags ...string) map[string]any {
	c["metadata"] = map[string]any{"tags": tags}
	return c
}
func markdown(src string) map[string]any {
	return map[string]any{"cell_type": "markdown", "source": src}
}

func TestCheck(t *testing.T) {
	lib := "<script>!function(t,e){e((t=self).echarts={})}(this,function(t){});</script>"
	chart := `<div id="c1" class="synclab-chart" style="width:600px;height:400px"></div>`
	cases := []struct {
		name, page string
		wantErr    string
	}{
		{"inline only", "<html><script>var a=1</script><p>x</p></html>", ""},
		{"data url", `<script src="data:text/javascript;base64,dmFyIGE9MQ=="></script>`, ""},
		{"cdn script", `<script src="https://cdn.jsdelivr.net/npm/echarts@5.4.3/dist/echarts.min.js"></script>`, "external script https://cdn.jsdelivr.net"},
		{"protocol-relative", `<script type="text/javascript" src='//cdnjs.cloudflare.com/x.js'></script>`, "external script //cdnjs"},
		{"local file", `<script src="file:///usr/share/javascript/requirejs/require.min.js"></script>`, "external script file:///usr/share"},
		{"placeholder left", `<script src="` + requireJSPlaceholder + `"></script>`, "external script synclab-inline"},
		{"web stylesheet", `<link rel="stylesheet" href="https://fonts.example.com/a.css">`, "external stylesheet"},
		{"chart with library", lib + chart, ""},
		{"chart without library", chart, "1 chart(s) but no inlined ECharts library"},
		{"no library when it ran", lib + chart + `<div>SyncLab: charts cannot be drawn: no local ECharts copy</div>`, "run make setup"},
		{"a verb without its argument", `<p>the 95%!i(MISSING)nterval</p>`, `formatted wrongly (Go's fmt wrote "%!i("`},
		{"an argument without its verb", `<p>total 3%!(EXTRA int=4)</p>`, "formatted wrongly"},
		{"a percent sign", `<p>95% interval, 100%! really</p>`, ""},
	}
	for _, c := range cases {
		err := Check([]byte(c.page))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.wantErr)
		}
	}
}

func TestEscapeScript(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"var a = 1 < 2;":                     "var a = 1 < 2;",
		`var s = "</script>";`:               `var s = "<\/script>";`,
		`"</SCRIPT >" + '</Script' + "</"`:   `"<\/SCRIPT >" + '<\/Script' + "</"`,
		`"</scrip" + "</div>" + "<\/script"`: `"</scrip" + "</div>" + "<\/script"`,
		"</script</script":                   `<\/script<\/script`,
	} {
		if got := EscapeScript(in); got != want {
			t.Errorf("EscapeScript(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNeedsMath(t *testing.T) {
	for page, want := range map[string]bool{
		"<p>energy $E = P t$ per wake-up</p>":                 true,
		"<p>$$\\sum_i t_i$$</p>":                              true,
		"<p>inline \\(x^2\\)</p>":                             true,
		"<p>costs $5 and $6</p>":                              false, // no closing pair on one token run
		"<p>plain text</p><script>var s = '$x$';</script>":    false,
		"<style>.a{content:'$a$'}</style><p>no math here</p>": false,
		"<p>\\begin{align} a &= b \\end{align}</p>":           true,
		"<pre>price: 3 $</pre>":                               false,
	} {
		if got := needsMath([]byte(page)); got != want {
			t.Errorf("needsMath(%q) = %v, want %v", page, got, want)
		}
	}
}

// writeTree writes files (path relative to root: content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeTools makes a .tools tree with small stand-ins for the assets.
func fakeTools(t *testing.T) Tools {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".tools/requirejs/require.js":             "var requirejs='REQUIRE-STANDIN'; // </script> must be escaped",
		".tools/mathjax/tex-svg.js":               "var MathJaxStandIn=1;",
		".tools/jupyter/kernels/gonb/kernel.json": "{}",
		".tools/echarts/echarts.min.js":           "x",
	}
	writeTree(t, root, files)
	return Tools{Root: root}
}

// nbconvertPage mimics the parts of nbconvert's lab template that inlineAssets rewrites.
func nbconvertPage(body string) string {
	return `<html><head><title>t</title><script src="` + requireJSPlaceholder + `"></script>
<style>.x{}</style>
<!-- Load mathjax -->
    <script src="` + mathJaxPlaceholder + `"> </script>
    <!-- MathJax configuration -->
    <script type="text/x-mathjax-config">
    init_mathjax = function() { if (window.MathJax) { MathJax.Hub.Config({}); } }
    init_mathjax();
    </script>
    <!-- End of mathjax configuration --></head><body>` + body + `</body></html>`
}

func TestInlineAssets(t *testing.T) {
	tools := fakeTools(t)

	out, err := inlineAssets(tools, []byte(nbconvertPage("<p>no math</p>")))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.Contains(s, "REQUIRE-STANDIN") || strings.Contains(s, "// </script> must") {
		t.Errorf("require.js not inlined with </script escaped:\n%s", s)
	}
	if strings.Contains(s, "MathJaxStandIn") || strings.Contains(s, "MathJax.Hub") {
		t.Errorf("MathJax kept on a page without math:\n%s", s)
	}
	if err := Check(out); err != nil {
		t.Errorf("inlined page fails Check: %v", err)
	}

	out, err = inlineAssets(tools, []byte(nbconvertPage(`<p>latency $L = t_1 - t_0$</p>`)))
	if err != nil {
		t.Fatal(err)
	}
	s = string(out)
	if !strings.Contains(s, "MathJaxStandIn") || !strings.Contains(s, "window.MathJax = {") {
		t.Errorf("MathJax 3 not inlined on a page with math:\n%s", s)
	}
	if strings.Contains(s, "MathJax.Hub") {
		t.Errorf("nbconvert's MathJax 2 configuration left in place")
	}
	if err := Check(out); err != nil {
		t.Errorf("inlined page fails Check: %v", err)
	}

	if _, err := inlineAssets(tools, []byte("<html>other template</html>")); err == nil {
		t.Error("a page without nbconvert's loaders must be an error, not silently pass")
	}
	if err := os.Remove(filepath.Join(tools.Dir(), "requirejs", "require.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := inlineAssets(tools, []byte(nbconvertPage(""))); err == nil || !strings.Contains(err.Error(), "setup.sh") {
		t.Errorf("missing require.js: error %v, want a hint to run setup.sh", err)
	}
}

// TestMissingAssetsFailClosed: without the offline scripts an export does not start, and says
// which command fetches them.
func TestMissingAssetsFailClosed(t *testing.T) {
	tools := fakeTools(t)
	if err := tools.checkAssets(); err != nil {
		t.Fatalf("all assets present: %v", err)
	}
	if err := os.Remove(filepath.Join(tools.Dir(), "echarts", "echarts.min.js")); err != nil {
		t.Fatal(err)
	}
	if err := tools.checkAssets(); err == nil || !strings.Contains(err.Error(), "echarts.min.js") || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("missing ECharts: %v, want an error naming it and make setup", err)
	}
}

func TestFindTools(t *testing.T) {
	tools := fakeTools(t)
	deep := filepath.Join(tools.Root, "notebooks", "sub")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	nb := filepath.Join(deep, "x.ipynb")
	if err := os.WriteFile(nb, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYNCLAB_ROOT", "")
	got, err := FindTools(nb)
	if err != nil || got.Root != tools.Root {
		t.Fatalf("FindTools(%s) = %v, %v; want root %s", nb, got, err, tools.Root)
	}
	t.Setenv("SYNCLAB_ROOT", t.TempDir())
	if _, err := FindTools(nb); err == nil || !strings.Contains(err.Error(), "SYNCLAB_ROOT") {
		t.Errorf("SYNCLAB_ROOT without a kernel: error %v, want it to name SYNCLAB_ROOT", err)
	}
	t.Setenv("SYNCLAB_ROOT", tools.Root)
	if got, err := FindTools(); err != nil || got.Root != tools.Root {
		t.Errorf("FindTools with SYNCLAB_ROOT = %v, %v", got, err)
	}
	env := strings.Join(got.Env(), "\n")
	kernels := filepath.Join(tools.Root, ".tools", "jupyter-report") + ":" + filepath.Join(tools.Root, ".tools", "jupyter")
	for _, want := range []string{"PATH=" + filepath.Join(tools.Root, ".tools", "bin") + ":", "JUPYTER_PATH=" + kernels} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %q", want)
		}
	}
}

func TestDrawnCharts(t *testing.T) {
	dom := `<html><body>
<div id="a" class="synclab-chart" style="width:600px" _echarts_instance_="ec_1"><div><canvas data-zr-dom-id="zr_0" width="600" height="400"></canvas></div></div><script>draw a</script>
<div id="b" class="synclab-chart" style="width:600px"></div><script>draw b</script>
<div id="c" class="synclab-chart" style="width:600px" _echarts_instance_="ec_2"><div></div></div><script>draw c</script>
<div id="d" class="synclab-chart" _echarts_instance_="ec_3"><canvas width="0" height="0"></canvas></div>
</body></html>`
	got := strings.Join(DrawnCharts([]byte(dom), []string{"a", "b", "c", "d", "e"}), "|")
	want := "b (ECharts never initialised it)|c (no drawn canvas)|d (no drawn canvas)|e (element gone)"
	if got != want {
		t.Errorf("DrawnCharts missing = %q\nwant %q", got, want)
	}
}

// TestChartsByCell: each chart belongs to the code cell whose div (tagged with its number by the
// export) holds it; charts of the cells the export adds are under 0.
func TestChartsByCell(t *testing.T) {
	chart := func(id string) string {
		return `<div id="` + id + `" class="synclab-chart" style="x"></div><script>d()</script>`
	}
	page := `<html><body>
<div class="jp-Cell jp-CodeCell jp-Notebook-cell   celltag_synclab-hide-input celltag_synclab-title">` + chart("title") + `</div>
<div class="jp-Cell jp-MarkdownCell jp-Notebook-cell"><p>text</p></div>
<div class="jp-Cell jp-CodeCell jp-Notebook-cell   celltag_summary celltag_synclab-cell-3 celltag_synclab-hide-input">` + chart("a") + chart("b") + `</div>
<div class="jp-Cell jp-CodeCell jp-Notebook-cell jp-mod-noOutputs  celltag_synclab-cell-30">
</div>
<div class="jp-Cell jp-CodeCell jp-Notebook-cell   celltag_synclab-cell-31">` + chart("c") + `</div>
<div class="jp-Cell jp-CodeCell jp-Notebook-cell   celltag_synclab-hide-input">` + chart("stamp") + `</div></body></html>`
	got := ChartsByCell([]byte(page))
	want := map[int][]string{0: {"title", "stamp"}, 3: {"a", "b"}, 31: {"c"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ChartsByCell = %v, want %v", got, want)
	}
}

func TestDisplayedCharts(t *testing.T) {
	for src, want := range map[string]int{
		"%%\nx := 1":                       0,
		"labkit.DisplayTable(t)":           0,
		"// labkit.Display(a, b)\n%%\nf()": 0,
		"%%\nlabkit.Display(labkit.BarsCI(res, \"a\"), labkit.BarsCI(res, \"b\"))":                           2,
		"labkit.Display(labkit.Timeline(fmt.Sprintf(\"%s, (%d)\", a, b), w))":                                1,
		"labkit.Display(labkit.Lines(\"t\", \"x\", \"y\", xs,\n\tlabkit.Series{Name: \"a\", Values: v},\n))": 1,
		"labkit.Display(\n\ta,\n\tb,\n)\nlabkit.Display(v.Charts...)":                                        3,
		"for _, r := range runs {\n\tlabkit.Display(labkit.Timeline(r.Variant, r.Trace))\n}":                 1,
		"labkit.Display()": 0,
	} {
		if got := displayedCharts(src); got != want {
			t.Errorf("displayedCharts(%q) = %d, want %d", src, got, want)
		}
	}
}

func TestHTMLToText(t *testing.T) {
	h := `<style>.gonb-err{}</style><div class="gonb-err"><span>main.go:3: undefined: &lt;foo&gt;</span><br>next</div>`
	if got, want := htmlToText(h), "main.go:3: undefined: <foo>\nnext"; got != want {
		t.Errorf("htmlToText = %q, want %q", got, want)
	}
	h = `<pre>a&nbsp;&amp;&#x27;b&#39;&quot;&hellip;</pre>`
	if got, want := htmlToText(h), `a &'b'"…`; got != want {
		t.Errorf("htmlToText = %q, want %q", got, want)
	}
}

// TestExport runs a small notebook through the real kernel: it must see the repository's module,
// render math offline and produce a page with no external script.
func TestExport(t *testing.T) {
	needJupyter(t)
	dir := t.TempDir()
	nb := writeTestNotebook(t, dir, "small.ipynb",
		markdown("# Small\n\nEnergy is $E = \\int P\\,dt$."),
		code("var Answer = 42 // parameters"),
		code("import \"synclab/platforms\"\n\n%%\nfmt.Println(\"provenance:\", platforms.MEAS, Answer)"),
		// A module the notebook's own go.mod does not require yet: GoNB's `go get` must resolve it to
		// go.mod's pin from the module cache (the kernel's GOPROXY), not ask the proxy for latest.
		code("%%\ndefer gonbui.Sync()\ngonbui.DisplayHTML(\"<b>from pinned gonbui</b>\")"),
		code("import \"os\"\n\n%%\nwd, _ := os.Getwd()\nfmt.Println(\"cwd:\", wd)"),
		code("%%\nfmt.Printf(\"tmp: %s.\\n\", os.TempDir())"),
	)
	before, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := exportPage(t, nb, t.TempDir())
	// The kernel runs in the notebook's folder, and the export leaves nothing there.
	if !strings.Contains(s, "cwd: "+dir) {
		t.Errorf("the kernel did not run in the notebook's folder %s", dir)
	}
	if after, err := os.ReadDir(dir); err != nil || len(after) != len(before) {
		t.Errorf("the notebook's folder had %d entries before the export and %v after (%v)", len(before), after, err)
	}
	// The kernel's temporary files (GoNB's cell modules and named pipes) go in a folder of the
	// export's own, which goes with it.
	if m := regexp.MustCompile(`tmp: (\S+)\.`).FindStringSubmatch(s); m == nil {
		t.Error("the kernel's temporary folder is missing from the report")
	} else if tmp := m[1]; tmp == os.TempDir() || !strings.HasPrefix(tmp, os.TempDir()) {
		t.Errorf("the kernel's temporary folder is %s, want a private one inside %s", tmp, os.TempDir())
	} else if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the kernel's temporary folder %s outlived the export (stat: %v)", tmp, err)
	}
	if !strings.Contains(s, "<title>Small</title>") {
		t.Error("the page's title is not the notebook's")
	}
	if !strings.Contains(s, "provenance: MEAS 42") {
		t.Error("cell output (from the repository's platforms package) missing from the report")
	}
	if !strings.Contains(s, "<b>from pinned gonbui</b>") {
		t.Error("a cell importing gonbui (pinned through go.mod) did not display")
	}
	if !strings.Contains(s, "window.MathJax = {") || !strings.Contains(s, "MathJax") {
		t.Error("MathJax not inlined although the page has math")
	}
	if !strings.Contains(s, "requirejs") {
		t.Error("require.js not inlined")
	}
}

// TestExportFailingCell: a failing cell fails the export, and the error names the notebook, the
// cell and what the cell printed.
// TestReport exports a notebook that runs an experiment as a report: code hidden by default (shown
// with ShowCode), markdown sanitised, -p changing what it prints, the stamp naming the code version,
// and each chart of a result linking its data as CSV with one row per run.
func TestReport(t *testing.T) {
	needJupyter(t)
	dir := t.TempDir()
	nb := writeTestNotebook(t, dir, "rep.ipynb",
		markdown("# Report test\n\nText with <script>window.injected = 1</script> in it."),
		tagged(code("var (\n\tRepeats = 2 // seeds per variant\n)"), ParametersTag),
		tagged(code(`import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"regexp"
	"slices"

	"synclab/labkit"
	"synclab/labkit/catalog"
)

%%
// codeMarker7f3a
res := labkit.Must(labkit.RunWith(context.Background(), labkit.Must(catalog.Lookup("rk3399-spinlock-wait")),
	labkit.Spec{Variants: []string{"wfe", "wfi"}, Set: map[string]float64{"duration_ms": 5}, Repeats: Repeats}))
labkit.MD("ran %d runs", len(res.Runs))
labkit.Display(labkit.BarsCI(res, "avg_lock_wait_ms"), labkit.BarsCI(res, "power_mw"))`), SummaryTag),
	)
	// The kernel compiles the same sources as this test: the stamp names them by their hash.
	code := "src:" + synclab.SourceHash()[:12]
	tests := []struct {
		name     string
		opts     Options
		runs     int
		codeShow bool
	}{
		{"-p Repeats=3, code hidden", Options{Params: map[string]string{"Repeats": "3"}}, 6, false},
		{"defaults, code shown, PDF", Options{ShowCode: true, PDF: e2e() || ChromiumPath() != ""}, 4, true}, // under SYNCLAB_E2E a missing Chromium fails
	}
	for _, tc := range tests {
		tc.opts.OutDir = filepath.Join(dir, "out")
		if err := Export(context.Background(), []string{nb}, tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := os.ReadFile(OutputPath(nb, tc.opts.OutDir))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		if want := fmt.Sprintf("ran %d runs", tc.runs); strings.Count(page, want) != 2 { // in the summary and in place
			t.Errorf("%s: the page says %q %d times, want 2 (summary and cell)", tc.name, want, strings.Count(page, want))
		}
		if got := strings.Contains(page, "codeMarker7f3a"); got != tc.codeShow {
			t.Errorf("%s: code shown %v, want %v", tc.name, got, tc.codeShow)
		}
		if strings.Contains(page, "<script>window.injected") || !strings.Contains(page, "&lt;script&gt;window.injected") {
			t.Errorf("%s: markdown's <script> not escaped", tc.name)
		}
		_, stamp, ok := strings.Cut(page, `<h2 id="Reproducibility">`)
		if !ok || !strings.Contains(stamp, code) || !strings.Contains(stamp, "rk3399-spinlock-wait") {
			t.Errorf("%s: no stamp with the code version %s and the experiment", tc.name, code)
		}
		if tc.opts.Params != nil && !strings.Contains(stamp, "3 (set with -p)") {
			t.Errorf("%s: the stamp does not record -p Repeats=3", tc.name)
		}
		if tc.opts.PDF {
			pdf, err := os.ReadFile(strings.TrimSuffix(OutputPath(nb, tc.opts.OutDir), ".html") + ".pdf")
			if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) || bytes.Count(pdf, []byte("/Subtype /Image")) < 2 {
				t.Errorf("%s: no PDF with the two charts as images (%v)", tc.name, err)
			}
		}
		ids := Charts(b)
		links := csvLinks(t, page)
		if len(ids) != 2 || len(links) != len(ids) {
			t.Fatalf("%s: %d charts, %d CSV links; want 2 of each", tc.name, len(ids), len(links))
		}
		// Cell 3 drew both charts; -p's injected cell does not shift the number.
		if byCell := ChartsByCell(b); fmt.Sprint(byCell) != fmt.Sprint(map[int][]string{3: ids}) {
			t.Errorf("%s: charts by cell %v, want both in cell 3", tc.name, byCell)
		}
		for i, rows := range links {
			if len(rows) != tc.runs+1 || rows[0][0] != "experiment" {
				t.Errorf("%s: chart %d's CSV has %d rows (header %v), want a header and one row per run (%d)", tc.name, i, len(rows), rows[0], tc.runs)
			}
		}
	}
}

var csvLink = regexp.MustCompile(`<a class="synclab-csv" download="[^"]+" href="data:text/csv;base64,([^"]+)">`)

// csvLinks decodes and parses every chart's CSV link in a page.
func csvLinks(t *testing.T, page string) [][][]string {
	t.Helper()
	var out [][][]string
	for _, m := range csvLink.FindAllStringSubmatch(page, -1) {
		b, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatalf("CSV link: %v", err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatalf("CSV link does not parse: %v\n%s", err, b)
		}
		out = append(out, rows)
	}
	return out
}

func TestExportFailingCell(t *testing.T) {
	needJupyter(t)
	dir := t.TempDir()
	cases := []struct {
		name, src string
		want      []string
	}{
		{"panics.ipynb", "%%\npanic(\"boom from the test cell\")", []string{"panics.ipynb", "code cell #2", "panic: boom from the test cell"}},
		{"nocompile.ipynb", "%%\nx := undefinedThing + 1\nfmt.Println(x)", []string{"nocompile.ipynb", "code cell #2", "undefined: undefinedThing"}},
		{"asserts.ipynb", "import \"synclab/labkit\"\n\n%%\nwfe, wfi := 3.0, 2.0\nlabkit.Assert(wfe < wfi, \"WFE waits less than WFI (%g vs %g ms)\", wfe, wfi)",
			[]string{"asserts.ipynb", "code cell #2", "conclusion does not hold: WFE waits less than WFI (3 vs 2 ms)"}},
		// The playground's shape: headless, the cell fails; with a browser
		// it would wait for widgets forever. The run that captures the
		// output must be headless too, or it waits until the cell timeout.
		{"widgets.ipynb", "import \"synclab/labkit\"\n\n%%\nif !labkit.Headless() {\n\tselect {}\n}\npanic(\"headless view broke\")",
			[]string{"widgets.ipynb", "code cell #2", "panic: headless view broke"}},
	}
	t.Setenv("SYNCLAB_CELL_TIMEOUT", "60") // a capture that waits fails in a minute, not ten
	for _, c := range cases {
		nb := writeTestNotebook(t, dir, c.name, code("%%\nfmt.Println(\"first cell ok\")"), code(c.src), code("%%\nfmt.Println(\"never runs\")"))
		err := Export(context.Background(), []string{nb}, Options{OutDir: filepath.Join(dir, "out")})
		if err == nil {
			t.Errorf("%s: export succeeded despite a failing cell", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error does not mention %q:\n%v", c.name, w, err)
			}
		}
		// A panic's message (labkit.Must's error) is the first line's cause, not "exit status 2".
		if first, _, _ := strings.Cut(err.Error(), "\n"); c.name != "nocompile.ipynb" && !strings.Contains(first, c.want[2]) {
			t.Errorf("%s: first line %q does not say %q", c.name, first, c.want[2])
		}
		if _, statErr := os.Stat(OutputPath(nb, filepath.Join(dir, "out"))); statErr == nil {
			t.Errorf("%s: a report was written for a failed notebook", c.name)
		}
	}
}

// A notebook that fails only with the -p values given says so on its first line: the values are
// the likeliest cause.
func TestExportFailingCellNamesParams(t *testing.T) {
	needJupyter(t)
	dir := t.TempDir()
	params := code("var Repeats = 3")
	params["metadata"] = map[string]any{"tags": []string{"parameters"}}
	nb := writeTestNotebook(t, dir, "params.ipynb", params, code("%%\nif Repeats < 1 {\n\tpanic(fmt.Sprintf(\"repeats %d, need at least 1\", Repeats))\n}"))
	err := Export(context.Background(), []string{nb}, Options{OutDir: filepath.Join(dir, "out"), Params: map[string]string{"Repeats": "0"}})
	if first, _, _ := strings.Cut(fmt.Sprint(err), "\n"); !strings.Contains(first, "params.ipynb with -p Repeats=0: ") || !strings.Contains(first, "panic: repeats 0, need at least 1") {
		t.Errorf("first line of the error %q, want the notebook, -p Repeats=0 and the panic", first)
	}
}

// TestExportRestartsAKernelDyingAtStart: a kernel that dies while starting, before it runs a cell,
// is started again, and the export says so with the kernel's own fatal error; a kernel that dies
// at every start fails the export after startAttempts starts, with that error.
func TestExportRestartsAKernelDyingAtStart(t *testing.T) {
	tools := needJupyter(t)
	for _, c := range []struct {
		name   string
		deaths int
	}{{"dies once", 1}, {"always dies", startAttempts}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			starts := filepath.Join(dir, "starts")
			t.Setenv("SYNCLAB_ROOT", dyingKernelTools(t, tools, starts, c.deaths).Root)
			nb := writeTestNotebook(t, dir, "k.ipynb", code("%%\nfmt.Println(\"ran\")"))
			var notes []string
			out := filepath.Join(dir, "out")
			err := Export(context.Background(), []string{nb}, Options{OutDir: out, Progress: func(e Event) {
				if e.Note != "" {
					notes = append(notes, e.Note)
				}
			}})
			n, _ := os.ReadFile(starts)
			if got := strings.Count(string(n), "start"); got != min(c.deaths+1, startAttempts) {
				t.Errorf("the kernel was started %d times, want %d", got, min(c.deaths+1, startAttempts))
			}
			if len(notes) != min(c.deaths, startAttempts-1) {
				t.Errorf("notes %q, want one for each restart", notes)
			}
			for i, n := range notes {
				if want := fmt.Sprintf("attempt %d of %d", i+2, startAttempts); !strings.Contains(n, "died while starting") ||
					!strings.Contains(n, "bind: address already in use") || !strings.Contains(n, want) {
					t.Errorf("note %q does not say the kernel died, what it said and %q", n, want)
				}
			}
			_, statErr := os.Stat(OutputPath(nb, out))
			if c.deaths < startAttempts {
				if err != nil || statErr != nil {
					t.Errorf("export after a restart: %v (report: %v)", err, statErr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("died while starting, %d times", startAttempts)) ||
				!strings.Contains(err.Error(), "bind: address already in use") {
				t.Errorf("error %v, want the kernel's deaths and its fatal error", err)
			}
			if statErr == nil {
				t.Error("a report was written although the notebook never ran")
			}
		})
	}
}

// dyingKernelTools makes a setup that shares tools' assets and kernel, but whose report kernel
// first logs a fatal error (as GoNB does when it cannot bind a port) and exits at its first deaths
// starts, each appended to the file starts.
func dyingKernelTools(t *testing.T, tools Tools, starts string, deaths int) Tools {
	t.Helper()
	root := t.TempDir()
	dst := Tools{Root: root}
	if err := os.MkdirAll(dst.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "echarts", "requirejs", "mathjax", "jupyter"} {
		if err := os.Symlink(filepath.Join(tools.Dir(), d), filepath.Join(dst.Dir(), d)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(tools.Dir(), "jupyter-report", "kernels", kernelName, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	argv := spec["argv"].([]any)
	script := filepath.Join(root, "dying-gonb")
	body := fmt.Sprintf(`#!/bin/sh
echo start >> '%s'
if [ "$(grep -c start '%s')" -le %d ]; then
	echo 'F1201 09:00:00.000000    4242 main.go:224] [0badcafe] Failed to start kernel: listen tcp 127.0.0.1:41234: bind: address already in use' >&2
	exit 255
fi
exec '%s' "$@"
`, starts, starts, deaths, argv[0])
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	argv[0] = script
	raw, err = json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dst.Dir(), "jupyter-report", "kernels", kernelName)
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "kernel.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestExportSideBySide: notebooks exported two at a time each get their report, progress calls
// never overlap, and when one fails the error is that notebook's own failure, not the
// interruption of the one stopped beside it, and the stopped one writes no report.
func TestExportSideBySide(t *testing.T) {
	needJupyter(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	a := writeTestNotebook(t, dir, "a.ipynb", code("%%\nfmt.Println(\"a\")"))
	b := writeTestNotebook(t, dir, "b.ipynb", code("%%\nfmt.Println(\"b\")"), code("%%\nfmt.Println(\"b2\")"))
	var inside, overlaps, done atomic.Int32
	progress := func(e Event) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(10 * time.Millisecond)
		if e.Files != nil {
			done.Add(1)
		}
		inside.Add(-1)
	}
	if err := Export(context.Background(), []string{a, b}, Options{OutDir: out, Jobs: 2, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	for _, nb := range []string{a, b} {
		if _, err := os.Stat(OutputPath(nb, out)); err != nil {
			t.Errorf("no report for %s: %v", nb, err)
		}
	}
	if done.Load() != 2 || overlaps.Load() != 0 {
		t.Errorf("%d notebooks reported done (want 2), %d overlapping progress calls (want 0)", done.Load(), overlaps.Load())
	}

	// The failing notebook is listed second but has more cells, so it starts first; the slow one
	// beside it is stopped when it fails.
	slow := writeTestNotebook(t, dir, "slow.ipynb", code("%%\ntime.Sleep(time.Hour)"))
	bad := writeTestNotebook(t, dir, "bad.ipynb", code("%%\nfmt.Println(1)"), code("%%\npanic(\"boom beside another\")"))
	start := time.Now()
	err := Export(context.Background(), []string{slow, bad}, Options{OutDir: out, Jobs: 2})
	if err == nil || !strings.Contains(err.Error(), "bad.ipynb") || !strings.Contains(err.Error(), "boom beside another") || errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want bad.ipynb's panic", err)
	}
	if took := time.Since(start); took > 10*time.Minute {
		t.Errorf("the export took %s: the notebook beside the failure was not stopped", took)
	}
	if _, err := os.Stat(OutputPath(slow, out)); err == nil {
		t.Error("the stopped notebook wrote a report")
	}
}

// TestReportKernelRunsWithoutGopls: a headless export runs the kernel of .tools/jupyter-report,
// whose PATH has no gopls (GoNB would start it, and it re-checks the workspace after every cell),
// while the interactive kernel's PATH has it.
func TestReportKernelRunsWithoutGopls(t *testing.T) {
	tools := needJupyter(t)
	dir := t.TempDir()
	nb := writeTestNotebook(t, dir, "gopls.ipynb", code("import \"os/exec\"\n\n%%\n_, err := exec.LookPath(\"gopls\")\nfmt.Printf(\"gopls on PATH: %v\\n\", err == nil)"))
	if page := exportPage(t, nb, filepath.Join(dir, "out")); !strings.Contains(page, "gopls on PATH: false") {
		t.Errorf("the report's kernel found gopls (or the cell printed nothing):\n%s", htmlToText(page))
	}
	spec, err := readKernelSpec(tools.kernelSpec())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range filepath.SplitList(spec.Env["PATH"]) {
		if _, err := os.Stat(filepath.Join(d, "gopls")); err == nil {
			found = true
		}
	}
	if !found {
		t.Errorf("the interactive kernel's PATH has no gopls: %s", spec.Env["PATH"])
	}
}

func TestLongestFirst(t *testing.T) {
	dir := t.TempDir()
	one := writeTestNotebook(t, dir, "one.ipynb", code("1"))
	three := writeTestNotebook(t, dir, "three.ipynb", code("1"), markdown("# x"), code("2"), code("3"))
	two := writeTestNotebook(t, dir, "two.ipynb", code("1"), code("2"))
	alsoTwo := writeTestNotebook(t, dir, "also-two.ipynb", code("1"), code("2"))
	if got, want := longestFirst([]string{one, two, three, alsoTwo}), []int{2, 1, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (most code cells first, ties in the order given)", got, want)
	}
}

// TestExportCancel: cancelling an export while a cell runs interrupts the cell and ends the export
// with an interruption at once, before the cell could have finished. The cell would sleep for an
// hour; the 15-minute limits below are hang guards (kernel start and compilation take seconds to a
// minute on a busy machine), not budgets.
func TestExportCancel(t *testing.T) {
	needJupyter(t)
	const hangGuard = 15 * time.Minute
	dir := t.TempDir()
	started, finished := filepath.Join(dir, "started"), filepath.Join(dir, "finished")
	nb := writeTestNotebook(t, dir, "slow.ipynb", code(fmt.Sprintf(`import "os"

%%%%
if err := os.WriteFile(%q, nil, 0o644); err != nil {
	panic(err)
}
time.Sleep(time.Hour)
if err := os.WriteFile(%q, nil, 0o644); err != nil {
	panic(err)
}`, started, finished)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Export(ctx, []string{nb}, Options{OutDir: filepath.Join(dir, "out")}) }()
	guard := time.After(hangGuard)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the export ended before the cell started: %v", err)
		case <-guard:
			t.Fatalf("hang guard: the cell did not start within %s", hangGuard)
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(hangGuard):
		t.Fatalf("hang guard: the cancelled export did not return within %s", hangGuard)
	}
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled export: error %v, want an interruption wrapping context.Canceled", err)
	}
	if _, err := os.Stat(finished); err == nil {
		t.Error("the cell ran to its end: the export waited for it instead of interrupting it")
	}
	if _, err := os.Stat(OutputPath(nb, filepath.Join(dir, "out"))); err == nil {
		t.Error("a cancelled export wrote a report")
	}
}

// TestChromiumCheck: a page with the inlined ECharts draws its chart with the network off; the same
// chart loading ECharts from a CDN does not, and the check says so.
func TestChromiumCheck(t *testing.T) {
	needChromium(t)
	tools := needSetup(t)
	lib, err := inlineScript(filepath.Join(tools.Dir(), "echarts", "echarts.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	chart := `<div id="chart-1" class="synclab-chart" style="width:600px;height:300px"></div>
<script>echarts.init(document.getElementById('chart-1')).setOption({xAxis:{data:['a','b']},yAxis:{},series:[{type:'bar',data:[1,2]}]});</script>`
	dir := t.TempDir()
	good := filepath.Join(dir, "good.html")
	bad := filepath.Join(dir, "cdn.html")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(good, []byte("<!DOCTYPE html><html><head>"+lib+"</head><body>"+chart+"</body></html>"), 0o644))
	must(os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><script src="https://cdn.jsdelivr.net/npm/echarts@5.4.3/dist/echarts.min.js"></script></head><body>`+chart+"</body></html>"), 0o644))

	if n, err := CheckInChromium(context.Background(), good); err != nil || n != 1 {
		t.Errorf("inlined chart: %d chart(s), err %v; want 1 drawn", n, err)
	}
	// Bypass the static check to prove the browser itself cannot reach the CDN.
	dom, err := RenderedDOM(context.Background(), bad, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if missing := DrawnCharts(dom, []string{"chart-1"}); len(missing) != 1 {
		t.Errorf("chart loading ECharts from a CDN was drawn with the network off (missing=%v)", missing)
	}
	if _, err := CheckInChromium(context.Background(), bad); err == nil {
		t.Error("CheckInChromium passed a page with an external script")
	}
}

// PrintPDF writes a PDF of the page, and replaces an earlier file whole
// (Chromium prints elsewhere first); it refuses a path that is not a
// regular file.
func TestPrintPDF(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	if err := os.WriteFile(page, []byte("<!DOCTYPE html><html><body><h1>SyncLab</h1><p>a report</p></body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(dir, "r.pdf")
	if err := os.WriteFile(pdf, []byte("an earlier, longer file that the PDF must replace whole"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PrintPDF(context.Background(), page, pdf); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) {
		t.Errorf("r.pdf is no whole PDF (%d bytes, %v)", len(b), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d files, want r.html and r.pdf only", len(entries))
	}
	if err := PrintPDF(context.Background(), page, dir); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("PrintPDF to a directory: %v, want a refusal naming it", err)
	}
}

// TestNotebooks executes every notebook in notebooks/ headless (make test sets SYNCLAB_E2E=1) in a
// result store of its own (every run simulated), fails on any cell error (a conclusion a notebook
// asserts with labkit.Assert included), checks each report is self-contained, that each code cell
// left at least the charts its labkit.Display calls draw, and that every chart is drawn in
// Chromium with the network off. Reports go to $SYNCLAB_REPORTS_DIR when set. Notebooks run side
// by side (go test -parallel, GOMAXPROCS by default). How long each notebook takes is logged;
// BenchmarkNotebooks measures it.
func TestNotebooks(t *testing.T) {
	if !e2e() {
		t.Skip("set SYNCLAB_E2E=1 (make test does) to execute every notebook")
	}
	tools := needJupyter(t)
	needChromium(t)
	out := os.Getenv("SYNCLAB_REPORTS_DIR")
	if out == "" {
		out = t.TempDir()
	}
	for _, nb := range labNotebooks(t, tools) {
		t.Run(filepath.Base(nb), func(t *testing.T) {
			t.Parallel() // as lab report runs them: one notebook's compiles beside another's simulation
			start := time.Now()
			if err := Export(context.Background(), []string{nb}, Options{OutDir: out}); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			html := OutputPath(nb, out)
			page, err := os.ReadFile(html) // Export has checked it (Check)
			if err != nil {
				t.Fatal(err)
			}
			byCell := ChartsByCell(page)
			for cell, want := range expectedCharts(t, nb) {
				if got := len(byCell[cell]); got < want {
					t.Errorf("cell %d left %d chart(s) in the report; its labkit.Display calls draw at least %d", cell, got, want)
				}
			}
			n, err := CheckInChromium(context.Background(), html)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: executed and exported in %s, %d chart(s) drawn, %d KB", filepath.Base(nb), took.Round(100*time.Millisecond), n, len(page)/1024)
		})
	}
}

// BenchmarkNotebooks measures how long each notebook takes to execute and export, every run
// simulated (a result store of the benchmark's own, emptied before each export).
func BenchmarkNotebooks(b *testing.B) {
	if _, err := exec.LookPath("jupyter-nbconvert"); err != nil {
		b.Skip("jupyter-nbconvert is not installed")
	}
	tools, err := FindTools()
	if err != nil {
		b.Skip(err)
	}
	for _, nb := range labNotebooks(b, tools) {
		b.Run(filepath.Base(nb), func(b *testing.B) {
			out := b.TempDir()
			for b.Loop() {
				b.StopTimer()
				b.Setenv("SYNCLAB_RESULTS", b.TempDir())
				b.StartTimer()
				if err := Export(context.Background(), []string{nb}, Options{OutDir: out}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// labNotebooks lists the repository's notebooks.
func labNotebooks(t testing.TB, tools Tools) []string {
	t.Helper()
	nbs, err := filepath.Glob(filepath.Join(tools.Root, "notebooks", "*.ipynb"))
	if err != nil || len(nbs) == 0 {
		t.Fatalf("no notebooks in %s/notebooks (%v)", tools.Root, err)
	}
	return nbs
}

// expectedCharts maps each code cell of a notebook that calls labkit.Display, by its number
// (counting every cell from 1, as ChartsByCell does), to the charts those calls draw at least.
func expectedCharts(t *testing.T, notebook string) map[int]int {
	t.Helper()
	raw, err := os.ReadFile(notebook)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := ParseNotebook(raw)
	if err != nil {
		t.Fatalf("%s: %v", notebook, err)
	}
	want := map[int]int{}
	for i, c := range nb.Cells {
		if n := displayedCharts(c.Source()); c.Type() == "code" && n > 0 {
			want[i+1] = n
		}
	}
	return want
}

// displayedCharts counts the charts a cell's labkit.Display calls draw at least: one per argument
// (a spread slice, charts..., at least one). A call in a loop draws at least once: a loop that
// runs zero times is a cell that draws nothing. The source is read token by token (go/scanner), so
// GoNB's special lines and commas in strings do not confuse the count.
func displayedCharts(src string) int {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", fset.Base(), len(src)), []byte(src), func(token.Position, string) {}, 0)
	var toks []token.Token
	var lits []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		toks, lits = append(toks, tok), append(lits, lit)
	}
	n := 0
	for i := 0; i+3 < len(toks); i++ {
		if lits[i] != "labkit" || toks[i+1] != token.PERIOD || lits[i+2] != "Display" || toks[i+3] != token.LPAREN {
			continue
		}
		depth, args, empty := 0, 1, true
		for j := i + 3; j < len(toks); j++ {
			switch toks[j] {
			case token.LPAREN, token.LBRACE, token.LBRACK:
				depth++
			case token.RPAREN, token.RBRACE, token.RBRACK:
				depth--
			case token.COMMA:
				if depth == 1 && j+1 < len(toks) && toks[j+1] != token.RPAREN { // not a trailing comma
					args++
				}
			case token.SEMICOLON: // automatic, at a line end inside the call
			default:
				if depth == 1 {
					empty = false
				}
			}
			if depth == 0 {
				break
			}
		}
		if !empty {
			n += args
		}
	}
	return n
}

// TestNbconvertCommand: nbconvert starts as `PYTHON -m nbconvert` with the interpreter of the
// jupyter-nbconvert script on PATH, and as `jupyter nbconvert` when that script names none.
func TestNbconvertCommand(t *testing.T) {
	dir := t.TempDir()
	python := filepath.Join(dir, "python3")
	if err := os.WriteFile(python, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, script, want string
	}{
		{"debian entry script", "#!" + python + "\n# EASY-INSTALL-ENTRY-SCRIPT\nimport re\n", python + " -m nbconvert"},
		{"env shebang", "#!/usr/bin/env python3\nimport re\n", "jupyter nbconvert"},
		{"missing interpreter", "#!" + filepath.Join(dir, "python9") + "\n", "jupyter nbconvert"},
		{"not python", "#!/bin/sh\nexec true\n", "jupyter nbconvert"},
		{"binary", "\x7fELF\x02\x01\x01", "jupyter nbconvert"},
		{"no script", "", "jupyter nbconvert"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			if c.script != "" {
				if err := os.WriteFile(filepath.Join(bin, "jupyter-nbconvert"), []byte(c.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin)
			name, args := nbconvertCommand()
			if got := strings.Join(append([]string{name}, args...), " "); got != c.want {
				t.Errorf("nbconvertCommand() = %q, want %q", got, c.want)
			}
		})
	}
}

// TestTail: an error keeps the last lines of nbconvert's log without the kernel's info, warning and
// error log lines, but with its fatal one, and without terminal colours.
func TestTail(t *testing.T) {
	log := "I1201 09:00:00.000000    7 main.go:187] \x1b[43m[0badcafe]\x1b[0m Logging\n" +
		"E1201 09:00:00.000001    7 main.go:191] [0badcafe] Error message\n" +
		"F1201 09:00:00.000002    7 main.go:224] \x1b[43m[0badcafe]\x1b[0m Failed to start kernel: bind: address already in use\n" +
		"Traceback (most recent call last):\n" +
		"RuntimeError: Kernel died before replying to kernel_info"
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "RuntimeError: Kernel died before replying to kernel_info"},
		{9, "F1201 09:00:00.000002    7 main.go:224] [0badcafe] Failed to start kernel: bind: address already in use\n" +
			"Traceback (most recent call last):\nRuntimeError: Kernel died before replying to kernel_info"},
	} {
		if got := tail(log, c.n); got != c.want {
			t.Errorf("tail(log, %d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got, want := kernelFatal(log), "it said: Failed to start kernel: bind: address already in use"; got != want {
		t.Errorf("kernelFatal = %q, want %q", got, want)
	}
	if got := kernelFatal("RuntimeError: Kernel died before replying to kernel_info"); got != "it logged no fatal error" {
		t.Errorf("kernelFatal of a log without a fatal line = %q", got)
	}
}
