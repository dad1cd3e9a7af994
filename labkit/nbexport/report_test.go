package nbexport

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseNotebook(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
	}{
		{"ok", `{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["a", "b"], "metadata": {}}, {"cell_type": "markdown", "source": "# T"}]}`, ""},
		{"broken", "{\n\"cells\": [", "invalid JSON at line 2"},
		{"array", `[1, 2]`, "not a notebook"},
		{"null", `null`, "not an object"},
		{"nbformat 3", `{"nbformat": 3, "cells": []}`, "nbformat 3"},
		{"cells not a list", `{"nbformat": 4, "cells": {}}`, "cells is"},
		{"cell not an object", `{"nbformat": 4, "cells": [7]}`, "cell 1:"},
		{"unknown type", `{"nbformat": 4, "cells": [{"cell_type": "python", "source": ""}]}`, "cell_type python"},
		{"bad source", `{"nbformat": 4, "cells": [{"cell_type": "code", "source": [1]}]}`, "cell 1: source"},
		{"bad metadata", `{"nbformat": 4, "cells": [{"cell_type": "code", "source": "", "metadata": []}]}`, "metadata"},
		{"bad outputs", `{"nbformat": 4, "cells": [{"cell_type": "code", "source": "", "outputs": 3}]}`, "outputs"},
	}
	for _, tc := range tests {
		nb, err := ParseNotebook([]byte(tc.json))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.wantErr)
		case err == nil && (len(nb.Cells) != 2 || nb.Cells[0].Source() != "ab" || nb.Title() != "T"):
			t.Errorf("%s: cells %v, title %q", tc.name, nb.Cells, nb.Title())
		}
	}
}

// TestLabNotebooks: the lab's notebooks parse, and each declares its
// parameters in its first code cell, tagged parameters, each with a comment.
func TestLabNotebooks(t *testing.T) {
	nbs, err := filepath.Glob(filepath.Join("..", "..", "notebooks", "*.ipynb"))
	if err != nil || len(nbs) == 0 {
		t.Fatalf("no notebooks (%v)", err)
	}
	for _, p := range nbs {
		nb, err := readNotebook(p)
		if err != nil {
			t.Error(err)
			continue
		}
		at, params, err := nb.Parameters()
		first := slices.IndexFunc(nb.Cells, func(c Cell) bool { return c.Type() == "code" })
		if err != nil || at != first || len(params) == 0 {
			t.Errorf("%s: parameters in cell %d (first code cell %d), %d parameters, %v", p, at+1, first+1, len(params), err)
		}
		if nb.Title() == "" {
			t.Errorf("%s: no title (# heading in the first markdown cell)", p)
		}
		for _, pa := range params {
			if pa.Doc == "" {
				t.Errorf("%s: parameter %s has no comment (a report's parameter table shows it as what the parameter is)", p, pa.Name)
			}
		}
	}
}

// FuzzParseNotebook: any input is a notebook or an error, never a panic;
// a notebook survives a round trip through Marshal unchanged. The seed
// corpus (testdata/fuzz) holds small notebooks with parameters, outputs
// and raw HTML.
func FuzzParseNotebook(f *testing.F) {
	f.Add([]byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["x"], "metadata": {"tags": ["parameters"]}, "outputs": []}]}`))
	f.Add([]byte(`{"nbformat": 4, "cells": [{"cell_type": "markdown", "source": null}]}`))
	f.Add([]byte(`{"nbformat": 4.0, "cells": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		nb, err := ParseNotebook(b)
		if err != nil {
			return
		}
		_, _, _ = nb.Parameters()
		_ = nb.Title()
		out, err := nb.Marshal()
		if err != nil {
			t.Fatalf("a parsed notebook does not marshal: %v", err)
		}
		back, err := ParseNotebook(out)
		if err != nil {
			t.Fatalf("a marshalled notebook does not parse: %v", err)
		}
		if len(back.Cells) != len(nb.Cells) {
			t.Fatalf("%d cells after a round trip, want %d", len(back.Cells), len(nb.Cells))
		}
		for i := range nb.Cells {
			if back.Cells[i].Source() != nb.Cells[i].Source() || back.Cells[i].Type() != nb.Cells[i].Type() {
				t.Fatalf("cell %d changed in a round trip", i+1)
			}
		}
	})
}

func TestSanitizeHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<p>a <b>b</b></p>`, `<p>a <b>b</b></p>`},
		{`<script>alert(1)</script>`, `&lt;script&gt;alert(1)&lt;/script&gt;`},
		{`<SCRIPT SRC=//x.js></SCRIPT>`, `&lt;SCRIPT SRC=//x.js&gt;&lt;/SCRIPT&gt;`},
		{`<img src=x onerror=alert(2)>`, `<img src="x">`},
		{`<a href="javascript:alert(1)">x</a>`, `<a>x</a>`},
		{`<a href="jav&#x09;ascript:alert(1)">x</a>`, `<a>x</a>`},
		{`<a href=" JAVASCRIPT:alert(1)">x</a>`, `<a>x</a>`},
		{`<a href="https://go.dev" onclick="x()" style="color:red">go</a>`, `<a href="https://go.dev">go</a>`},
		{`<a class="anchor-link" href="#Sec-one">¶</a>`, `<a class="anchor-link" href="#Sec-one">¶</a>`},
		{`<h2 id="A-b">A b</h2>`, `<h2 id="A-b">A b</h2>`},
		{`<img src="data:image/png;base64,AAAA" alt="x">`, `<img src="data:image/png;base64,AAAA" alt="x">`},
		{`<img src="data:image/svg+xml;base64,AAAA">`, `<img>`},
		{`<iframe src="https://x"></iframe>`, `&lt;iframe src=&#34;https://x&#34;&gt;&lt;/iframe&gt;`},
		{`<svg onload=alert(1)>`, `&lt;svg onload=alert(1)&gt;`},
		{`<!-- hidden --><p>x</p>`, `<p>x</p>`},
		{`<!-- unterminated <script>x</script>`, `&lt;!-- unterminated &lt;script&gt;x&lt;/script&gt;`},
		{`<img src="x" <script>`, `<img src="x">`},
		{`a < b and c > d`, `a &lt; b and c > d`},
		{`<td colspan="2" onmouseover="x">`, `<td colspan="2">`},
		{`<p title='it&apos;s "q"'>`, `<p title="it&#39;s &#34;q&#34;">`},
	}
	for _, tc := range tests {
		if got := sanitizeHTML(tc.in); got != tc.want {
			t.Errorf("sanitizeHTML(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestSanitizeMarkdownCells: only what lies between a cell's markers is
// sanitised (charts' scripts elsewhere stay), and a missing marker is an
// error rather than an unsanitised page.
func TestSanitizeMarkdownCells(t *testing.T) {
	n := "abc"
	page := `<script>chart()</script><p>` + mdBegin(n) + `</p><p>x <script>alert(1)</script></p><p>` + mdEnd(n) + `</p><div>out</div>`
	got, err := sanitizeMarkdownCells(page, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<script>chart()</script><p>x &lt;script&gt;alert(1)&lt;/script&gt;</p><div>out</div>`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := sanitizeMarkdownCells(page, n, 2); err == nil {
		t.Error("a markdown cell without markers in the page must be an error")
	}
}

func TestParameters(t *testing.T) {
	src := "// Parameters\nvar (\n\tIterations = 1000000.0 // per task\n\t// Seeds per\n\t// variant.\n\tRepeats = 3\n\tName = \"x\"\n\tOn = true\n\tCs = []float64{0, 120}\n\tWin = [2]float64{5, 6}\n\tMHz float64 = 240\n\tf = math.Sqrt(2)\n)"
	nb := &Notebook{Cells: []Cell{{"cell_type": "markdown", "source": "# T"}, codeCell("p", src, []string{ParametersTag}), codeCell("c", "%%\nfmt.Println(Repeats)", nil)}}
	at, ps, err := nb.Parameters()
	if err != nil || at != 1 {
		t.Fatalf("Parameters: %d %v", at, err)
	}
	types := map[string]string{}
	for _, p := range ps {
		types[p.Name] = p.Type
	}
	want := map[string]string{"Iterations": "float64", "Repeats": "int", "Name": "string", "On": "bool", "Cs": "[]float64", "Win": "[2]float64", "MHz": "float64", "f": ""}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s: type %q, want %q", k, types[k], v)
		}
	}
	if ps[0].Doc != "per task" || ps[0].Value != "1000000.0" {
		t.Errorf("Iterations: %+v", ps[0])
	}
	if ps[1].Doc != "Seeds per variant." || ps[2].Doc != "" {
		t.Errorf("a comment above one parameter is its doc, on one line, and no other's: %q, %q", ps[1].Doc, ps[2].Doc)
	}
	bad := []struct{ key, value, wantErr string }{
		{"Nope", "1", "no such parameter; the notebook's parameters: Iterations, Repeats"},
		{"Repeats", "2.5", "Repeats is of type int, want a whole number"},
		{"Iterations", "many", "want a number"},
		{"On", "maybe", "true or false"},
		{"Win", "1,2,3", "2 comma-separated values"},
		{"Cs", "1,x", "comma-separated float64"},
		{"f", "1", "not a plain value"},
	}
	for _, b := range bad {
		cp := &Notebook{Cells: append([]Cell(nil), nb.Cells...)}
		if err := cp.SetParameters(map[string]string{b.key: b.value}); err == nil || !strings.Contains(err.Error(), b.wantErr) {
			t.Errorf("-p %s=%s: error %v, want %q", b.key, b.value, err, b.wantErr)
		}
	}
	if err := nb.SetParameters(map[string]string{"Repeats": "5", "Name": `a "b"`, "Cs": "1, 2.5", "Iterations": "1e3", "Win": "1,2"}); err != nil {
		t.Fatal(err)
	}
	if len(nb.Cells) != 4 || !nb.Cells[2].HasTag(InjectedTag) {
		t.Fatalf("no injected cell after the parameters: %v", nb.Cells)
	}
	wantSrc := "// Parameters set with lab report -p.\nvar Cs []float64 = []float64{1, 2.5}\nvar Iterations float64 = 1000\nvar Name string = \"a \\\"b\\\"\"\nvar Repeats int = 5\nvar Win [2]float64 = [2]float64{1, 2}\n"
	if got := nb.Cells[2].Source(); got != wantSrc {
		t.Errorf("injected cell\n%s\nwant\n%s", got, wantSrc)
	}
	if _, _, err := parseParamsCell("var ("); err == nil {
		t.Error("a parameters cell that is not Go must be an error")
	}
	none := &Notebook{Cells: []Cell{codeCell("c", "x := 1", nil)}}
	if err := none.SetParameters(map[string]string{"a": "1"}); err == nil || !strings.Contains(err.Error(), "no cell is tagged") {
		t.Errorf("-p on a notebook without parameters: %v", err)
	}
}

// parseParamsCell parses a parameters cell's source.
func parseParamsCell(src string) (int, []Param, error) {
	nb := &Notebook{Cells: []Cell{codeCell("p", src, []string{ParametersTag})}}
	return nb.Parameters()
}

// TestValidate: bad input is refused before any work, with one line naming
// the problem.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeTestNotebook(t, dir, "good.ipynb", code("var (\n\tN = 3\n)"), code("%%\nfmt.Println(N)"))
	nb, _ := readNotebook(good)
	nb.Cells[0].AddTag(ParametersTag)
	if err := writeNotebook(good, nb); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.ipynb")
	if err := os.WriteFile(broken, []byte("{\n  \"cells\": [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(dir, "sub", "good.ipynb")
	if err := os.MkdirAll(filepath.Dir(twin), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	if err := os.WriteFile(twin, b, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	tests := []struct {
		name      string
		notebooks []string
		opts      Options
		wantErr   string
	}{
		{"fine", []string{good}, Options{OutDir: out, Params: map[string]string{"N": "4"}}, ""},
		{"missing", []string{filepath.Join(dir, "nope.ipynb")}, Options{OutDir: out}, "nope.ipynb: no such file"},
		{"broken JSON", []string{broken}, Options{OutDir: out}, "invalid JSON at line 3"},
		{"directory", []string{dir}, Options{OutDir: out}, "a directory, not a notebook"},
		{"same base name", []string{good, twin}, Options{OutDir: out}, "would both write"},
		{"output is a file", []string{good}, Options{OutDir: file}, "not a directory"},
		{"no output", []string{good}, Options{}, "-o DIR"},
		{"unknown parameter", []string{good}, Options{OutDir: out, Params: map[string]string{"M": "1"}}, "no such parameter"},
		{"no notebook", nil, Options{OutDir: out}, "no notebook"},
	}
	for _, tc := range tests {
		err := Validate(tc.notebooks, tc.opts)
		var bad *BadInputError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (!errors.As(err, &bad) || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: error %v, want a one-line bad-input error mentioning %q", tc.name, err, tc.wantErr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("Validate created the output directory")
	}
}

// TestFinish: empty outputs (cleared progress lines) and hidden cells with
// nothing to show go; the summary, title block and stamp are added.
func TestFinish(t *testing.T) {
	progress := htmlOutput("")
	stream := map[string]any{"output_type": "stream", "name": "stderr", "text": "I1130 17:48:08.44 12890 main.go:261] Exiting...\nreal warning\n"}
	summary := map[string]any{"output_type": "display_data", "data": map[string]any{"text/markdown": "**WFE wins**"}}
	chart := htmlOutput(`<div id="c1" class="synclab-chart"></div>`)
	nb := &Notebook{Cells: []Cell{
		{"cell_type": "markdown", "source": "# The title\n\nintro"},
		codeCell("a", "x", []string{hideInputTag}, progress),
		codeCell("b", "y", []string{hideInputTag, SummaryTag}, progress, chart, summary, stream),
		codeCell("c", "z", []string{ShowCodeTag}, progress),
	}}
	ri := reportInfo{notebook: "notebooks/x.ipynb", source: []byte("{}"), title: "The title", when: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
		params: []Param{{Name: "N", Type: "int", Value: "3"}}, set: map[string]string{"N": "4"},
		records: []RunRecord{{Experiment: "exp", Variants: []string{"a", "b"}, Repeats: 2, Runs: 4, Seed: 9, Hash: "h1", Code: "abc123 go1.26", Set: map[string]float64{"k": 2}}}}
	finish(nb, ri)
	var ids []string
	for _, c := range nb.Cells {
		ids = append(ids, fmt.Sprint(c.Type(), ":", c["id"]))
	}
	if got := strings.Join(ids, " "); got != "code:synclab-title markdown:<nil> code:b code:c code:synclab-stamp" {
		t.Errorf("cells %s", got)
	}
	if outs := nb.Cells[2].Outputs(); len(outs) != 3 || outs[2]["text"] != "real warning\n" {
		t.Errorf("cell b outputs %v, want the chart, the summary and the warning", outs)
	}
	if len(nb.Cells[3].Outputs()) != 0 {
		t.Error("the shown cell kept its empty output")
	}
	if strings.Contains(nb.Cells[1].Source(), "# The title") {
		t.Error("the title is shown twice")
	}
	title := outputText(nb.Cells[0])
	for _, want := range []string{"The title", "notebooks/x.ipynb", "N=4", "exp", "4 runs: 4 computed", "**WFE wins**", tocPlaceholder, "abc123 go1.26"} {
		if !strings.Contains(title, want) {
			t.Errorf("title block lacks %q", want)
		}
	}
	stamp := outputText(nb.Cells[len(nb.Cells)-1])
	for _, want := range []string{"Reproducibility", "abc123 go1.26", "lab report notebooks/x.ipynb -o DIR -p N=4", "4 (set with -p)", "h1", ">9<", "exp", "k=2"} {
		if !strings.Contains(stamp, want) {
			t.Errorf("stamp lacks %q", want)
		}
	}
}

// outputText joins the HTML and Markdown of a cell's outputs.
func outputText(c Cell) string {
	var b strings.Builder
	for _, o := range c.Outputs() {
		data, _ := o["data"].(map[string]any)
		for _, k := range []string{"text/html", "text/markdown"} {
			t, _ := sourceText(data[k])
			b.WriteString(t)
		}
	}
	return b.String()
}

// TestDistinctive: the stamp tells an experiment's definitions apart by
// what differs from its usual values (the most frequent, the earliest of
// equals), and shows what the notebook set for one run only once.
func TestDistinctive(t *testing.T) {
	recs := []RunRecord{
		{Experiment: "a", Params: map[string]float64{"x": 1, "y": 2, "z": 3}, Set: map[string]float64{"z": 3}},
		{Experiment: "a", Params: map[string]float64{"x": 1, "y": 5, "z": 3}},
		{Experiment: "a", Params: map[string]float64{"x": 1, "y": 5, "z": 4}},
		{Experiment: "b", Params: map[string]float64{"x": 9}, Set: map[string]float64{"x": 9}},
		{Experiment: "c", Params: map[string]float64{"x": 1, "y": 7}},
		{Experiment: "c", Params: map[string]float64{"x": 2, "y": 7}},
	}
	usual := usualValues(recs, nil)
	if want := map[string]float64{"y": 5, "z": 3}; !reflect.DeepEqual(usual["a"], want) || len(usual) != 2 || len(usual["c"]) != 1 || !math.IsNaN(usual["c"]["x"]) {
		t.Errorf("usual values %v, want a: %v (x never differs in a), c: x without one (a tie), none for b (ran once)", usual, want)
	}
	for i, want := range []string{"y=2", "usual values", "z=4", "x=9", "x=1", "x=2"} {
		if got := distinctive(recs[i], usual[recs[i].Experiment]); got != want {
			t.Errorf("record %d: %q, want %q", i, got, want)
		}
	}
	if got := usualLine(usual["c"], nil); got != "" {
		t.Errorf("usual line of c %q, want none", got)
	}
	// With the defaults known, a tie goes to the default (c's x=2 here),
	// not to whichever record came first.
	usual = usualValues(recs, map[string]map[string]float64{"c": {"x": 2, "y": 7}})
	if want := map[string]float64{"x": 2}; !reflect.DeepEqual(usual["c"], want) {
		t.Errorf("usual values of c %v, want %v", usual["c"], want)
	}
	for _, tc := range []struct {
		usual, defaults map[string]float64
		want            string
	}{
		{map[string]float64{"x": 2}, map[string]float64{"x": 2, "y": 7}, "its defaults"},
		{map[string]float64{"x": 3, "y": math.NaN()}, map[string]float64{"x": 2, "y": 7}, "x=3, the others its defaults"},
		{map[string]float64{"x": 3, "y": math.NaN()}, nil, "x=3"},
	} {
		if got := usualLine(tc.usual, tc.defaults); got != tc.want {
			t.Errorf("usualLine(%v, %v) = %q, want %q", tc.usual, tc.defaults, got, tc.want)
		}
	}
	if got, want := changed(map[string]float64{"x": 1, "y": 7, "new": 3}, map[string]float64{"x": 2, "y": 7}), map[string]float64{"x": 1, "new": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed = %v, want %v", got, want)
	}
}

func TestTableOfContents(t *testing.T) {
	page := `<h1 id="T">T</h1><h2 id="1.-One">1. One<a class="anchor-link" href="#1.-One">¶</a></h2><h3 id="a">a &amp; b</h3><h3 id="b">b</h3><h2 id="Two">Two</h2>`
	want := `<ul><li><a href="#1.-One">1. One</a><ul><li><a href="#a">a &amp; b</a></li><li><a href="#b">b</a></li></ul></li><li><a href="#Two">Two</a></li></ul>`
	if got := tableOfContents(page); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestParameterValues: the types -p infers from a signed literal or a
// conversion, and the Go source it writes: a bool in Go's spelling
// whatever strconv.ParseBool accepted, an empty value as an empty slice
// (and refused for an array of fixed length).
func TestParameterValues(t *testing.T) {
	src := "var (\n\tN = -3\n\tX = +2.5\n\tF = float64(3)\n\tOn = false\n\tCs = []float64{1}\n\tWin = [2]int{1, 2}\n\tU = uint32(4)\n)"
	_, ps, err := parseParamsCell(src)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range ps {
		types = append(types, p.Name+":"+p.Type)
	}
	if got, want := strings.Join(types, " "), "N:int X:float64 F:float64 On:bool Cs:[]float64 Win:[2]int U:uint32"; got != want {
		t.Errorf("types %s, want %s", got, want)
	}
	for _, tc := range []struct{ name, raw, want string }{
		{"On", "1", "var On bool = true\n"},
		{"On", "F", "var On bool = false\n"},
		{"Cs", "", "var Cs []float64 = []float64{}\n"},
		{"Cs", " ", "var Cs []float64 = []float64{}\n"},
		{"N", "-7", "var N int = -7\n"},
		{"F", "2", "var F float64 = 2\n"},
		{"Win", "", "error: -p Win=: Win is of type [2]int, want 2 comma-separated values"},
		// Values Go cannot write as a literal of the type are refused up
		// front, not left to fail the cell's compilation.
		{"F", "inf", "error: -p F=inf: F is of type float64, want a finite number"},
		{"F", "NaN", "want a finite number"},
		{"N", "99999999999999999999", "want a whole number that fits in 64 bits"},
		{"U", "-1", "error: -p U=-1: U is of type uint32, want a non-negative whole number that fits in 32 bits"},
		{"U", "4294967296", "fits in 32 bits"},
		{"U", "4294967295", "var U uint32 = 4294967295\n"},
	} {
		nb := &Notebook{Cells: []Cell{codeCell("p", src, []string{ParametersTag})}}
		got := ""
		if err := nb.SetParameters(map[string]string{tc.name: tc.raw}); err != nil {
			got = "error: " + err.Error()
		} else {
			got = strings.TrimPrefix(nb.Cells[1].Source(), "// Parameters set with lab report -p.\n")
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("-p %s=%q: %q, want %q", tc.name, tc.raw, got, tc.want)
		}
	}
}

// TestParseSetting: -p takes name=value with a name (spaces around it
// dropped) and the value as given, which may contain "=".
func TestParseSetting(t *testing.T) {
	for _, tc := range []struct{ in, key, value, err string }{
		{"N=3", "N", "3", ""},
		{" N =3", "N", "3", ""},
		{"Name=a=b", "Name", "a=b", ""},
		{"Name=", "Name", "", ""},
		{"N", "", "", `-p "N": want name=value`},
		{"=3", "", "", `-p "=3": want name=value`},
		{" =3", "", "", `-p " =3": want name=value`},
	} {
		k, v, err := ParseSetting(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if k != tc.key || v != tc.value || got != tc.err {
			t.Errorf("ParseSetting(%q) = %q, %q, %q; want %q, %q, %q", tc.in, k, v, got, tc.key, tc.value, tc.err)
		}
	}
}

// TestStampRunTexts pins the stamp's account of the runs: a record's
// variants x points x repeats when its runs are exactly those (a
// sensitivity run's several definitions give the bare count), where they
// came from, and per experiment the sum over its records, traced runs
// counted apart from cached ones; a shell word that needs no quotes keeps
// none, an empty one is quoted (two single quotes).
func TestStampRunTexts(t *testing.T) {
	sweep := []SweepAxis{{Param: "cores", Values: []float64{1, 2, 4, 8}}, {Param: "hz", Values: []float64{100, 1000}}}
	for _, tc := range []struct {
		r    RunRecord
		want string
	}{
		{RunRecord{Variants: []string{"wfe"}, Repeats: 5, Runs: 5}, "(1 variant x 5 repeats = 5 runs, computed)"},
		{RunRecord{Variants: []string{"wfe", "wfi"}, Sweep: sweep, Repeats: 2, Runs: 32, Cached: true}, "(2 variants x 8 points x 2 repeats = 32 runs, from the store)"},
		{RunRecord{Variants: []string{"wfe", "wfi"}, Repeats: 3, Runs: 30, Failed: 2}, "(30 runs, computed, 2 failed)"},
		{RunRecord{Variants: []string{"wfe"}, Repeats: 2, Runs: 2, Traced: true, Cached: true}, "(1 variant x 2 repeats = 2 runs, traced)"},
		{RunRecord{Variants: []string{"wfe"}, Repeats: 1, Runs: 1, Cached: true}, "(1 variant x 1 repeat = 1 run, from the store)"},
	} {
		if got := runsText(tc.r); got != tc.want {
			t.Errorf("runsText(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
	recs := []RunRecord{
		{Experiment: "a", Runs: 6}, {Experiment: "b", Runs: 2, Traced: true, Cached: true}, {Experiment: "a", Runs: 4, Cached: true, Failed: 1},
	}
	if got, want := ranText(recs), "<code>a</code> (2 definitions, 10 runs: 6 computed, 4 from the store, 1 failed); <code>b</code> (2 runs: 2 traced)"; got != want {
		t.Errorf("ranText = %q\nwant      %q", got, want)
	}
	// Values as -set takes them, without an exponent.
	if got, want := floatSettings(map[string]float64{"iterations": 1e6, "load": 0.25}), "iterations=1000000, load=0.25"; got != want {
		t.Errorf("floatSettings = %q, want %q", got, want)
	}
	if got, want := sweepText([]SweepAxis{{Param: "n", Values: []float64{1e6, 0.5}}}), "n = 1000000, 0.5"; got != want {
		t.Errorf("sweepText = %q, want %q", got, want)
	}
	for in, want := range map[string]string{"": "''", "cores=4": "cores=4", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
