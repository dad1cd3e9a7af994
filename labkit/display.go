package labkit

import (
	"encoding/base64"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"

	"synclab/labkit/nbexport"
)

// ChartLibrary locates the local ECharts build that reports and notebooks
// inline: $SYNCLAB_ECHARTS, else .tools/echarts/echarts.min.js under the
// repository root (FindRoot) or a directory above the working directory.
// Without one, charts cannot be drawn, and the error says where it looked
// and how to get one.
func ChartLibrary() (string, error) {
	if p := os.Getenv("SYNCLAB_ECHARTS"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("no local ECharts copy: SYNCLAB_ECHARTS=%s: %w", p, err)
		}
		return p, nil
	}
	rel := filepath.Join(".tools", "echarts", "echarts.min.js")
	root := FindRoot()
	if root != "" {
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			return filepath.Join(root, rel), nil
		}
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, e := os.Stat(filepath.Join(dir, rel)); e == nil {
			return filepath.Join(dir, rel), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if root == "" {
		return "", fmt.Errorf("no local ECharts copy (%s): the SyncLab repository is not at or above the working directory or this program: run from the repository, or set SYNCLAB_ROOT to it", rel)
	}
	return "", fmt.Errorf("no local ECharts copy at %s: run make setup (scripts/setup.sh) in %s", filepath.Join(root, rel), root)
}

// missingLibraryHTML is shown instead of charts when there is no local
// ECharts copy: reports are shared by e-mail and on wikis, so charts never
// load a script from the network.
const missingLibraryHTML = `<div class="synclab-error" style="color:#b00000;font-weight:bold">SyncLab: charts cannot be drawn: ` +
	`no local ECharts copy (.tools/echarts/echarts.min.js). Run <code>make setup</code> (scripts/setup.sh) in the repository, ` +
	`or set SYNCLAB_ECHARTS to an echarts.min.js.</div>`

// LibraryHTML returns the HTML that defines window.echarts once per page:
// the local copy inlined (guarded against re-definition; AMD/CommonJS
// hidden so classic Notebook's require.js does not capture it), or, without
// a local copy, a visible error that says how to get one.
func LibraryHTML() string {
	if p, err := ChartLibrary(); err == nil {
		if b, err := os.ReadFile(p); err == nil {
			return "<script>if (!window.echarts) { (function (define, module, exports) {\n" + nbexport.EscapeScript(string(b)) + "\n}).call(window); }</script>"
		}
	}
	return missingLibraryHTML
}

// HTML returns the chart's element, the script that draws it once
// window.echarts exists (it waits for it, and says so if the library never
// appears, e.g. after clearing a notebook's outputs) and a link to the
// chart's data as CSV. The chart follows the page's width (at most
// maxChartWidth) and redraws when it changes or the page is printed. The
// option is escaped for the <script> element, so a title or series name
// may contain "</script>".
func (c *Chart) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div id="%[1]s" class="synclab-chart" style="width:100%%;max-width:%[2]dpx;height:%[3]s"></div>
<script>(function () {
  var el = document.currentScript && document.currentScript.previousElementSibling;
  if (!el || el.id !== %[4]q) { el = document.getElementById(%[4]q); }
  %[6]s
  %[7]s
  function draw() {
    var chart = echarts.init(el); chart.setOption(revive(%[5]s));
    // Titles and category labels wrap at the chart's width as drawn, and
    // never wider than a printed page's (about 680 px): beforeprint only
    // resizes, since an option update there makes Chromium print the
    // canvas as vector paths instead of the image a PDF gets of every
    // other chart.
    var fit = function () {
      var w = Math.min(chart.getWidth(), 680), o = chart.getOption();
      chart.setOption({
        title: (o.title || []).map(function () { return {textStyle: {width: w - 110, lineHeight: 20}, subtextStyle: {width: w - 110, lineHeight: 15}}; }),
        xAxis: (o.xAxis || []).map(function (a) {
          return a.type === 'category' && a.data && a.data.length ? {axisLabel: {width: Math.max(40, Math.floor(0.8 * w / a.data.length) - 8), lineHeight: 15}} : {};
        })
      });
    };
    fit();
    window.addEventListener('resize', function () { chart.resize(); fit(); });
    window.addEventListener('beforeprint', function () { chart.resize(); });
  }
  if (window.echarts) { draw(); return; }
  var tries = 0, timer = setInterval(function () {
    if (window.echarts) { clearInterval(timer); draw(); return; }
    if (++tries == 60) {
      clearInterval(timer);
      el.insertAdjacentHTML('beforebegin', '<div style="color:#b00000">SyncLab: this chart needs ECharts, which is not on this page. In a notebook, call labkit.InitNotebook() (were the outputs cleared?); for a report, run make setup (it installs the library) and write the report again.</div>');
    }
  }, 50);
})();</script>`, c.ID, maxChartWidth, c.Height, c.ID, nbexport.EscapeScript(c.Option), funcsJS(c.Option), reviveJS)
	if c.csv != "" {
		rows := strings.Count(strings.TrimSuffix(c.csv, "\n"), "\n")
		fmt.Fprintf(&b, "\n"+`<div class="synclab-data"><a class="synclab-csv" download="%s.csv" href="data:text/csv;base64,%s">data behind this chart (CSV, %d rows)</a></div>`,
			html.EscapeString(slug(c.Title)), base64.StdEncoding.EncodeToString([]byte(c.csv)), rows)
	}
	return b.String()
}

// injectedMarker is a file in the GoNB kernel's temporary directory that
// records that this kernel session already sent the library to the page.
func injectedMarker() string {
	dir := os.Getenv("GONB_TMP_DIR")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "synclab-echarts-injected")
}

// Hooks for the tests; in a notebook they are gonbui's.
var (
	inNotebook   = func() bool { return gonbui.IsNotebook }
	displayHTML  = gonbui.DisplayHTML
	syncNotebook = gonbui.Sync
)

// InitNotebook sends the ECharts library to the notebook page (call it in
// a notebook's first cell; Display does it by itself the first time in a
// kernel session) and waits until GoNB has delivered it (gonbui.Sync), so a
// cell that ends right after the call does not lose the 1 MB library. A
// notebook's own `defer gonbui.Sync()` is harmless: it only waits again.
func InitNotebook() {
	if !inNotebook() {
		return
	}
	sendLibrary()
	syncNotebook()
}

// sendLibrary displays the library and records that this kernel session has
// it.
func sendLibrary() {
	displayHTML(LibraryHTML())
	if m := injectedMarker(); m != "" {
		_ = os.WriteFile(m, nil, 0o644)
	}
}

// Display shows charts inline in a GoNB notebook (classic Notebook,
// JupyterLab and nbconvert's HTML export), sending the ECharts library
// first when this kernel session has not, and waits until the output has
// reached GoNB (gonbui.Sync), so notebooks need no `defer gonbui.Sync()`.
// Outside a notebook it prints a hint on stderr.
func Display(charts ...*Chart) {
	if !inNotebook() {
		fmt.Fprintln(os.Stderr, "labkit.Display: not running in a GoNB notebook; use a Report to write HTML")
		return
	}
	if m := injectedMarker(); m == "" {
		sendLibrary()
	} else if _, err := os.Stat(m); err != nil {
		sendLibrary()
	}
	var b strings.Builder
	for _, c := range charts {
		b.WriteString(c.HTML())
	}
	displayHTML(b.String())
	syncNotebook()
}

// DisplayTable shows a table inline in a GoNB notebook and waits until it has
// reached GoNB (gonbui.Sync); outside a notebook it prints it on stdout.
func DisplayTable(t Table) {
	if inNotebook() {
		displayHTML(t.StyledHTML())
		syncNotebook()
		return
	}
	t.WriteText(os.Stdout)
}

// StyledHTML is the table's HTML with its style sheet, as DisplayTable
// shows it.
func (t Table) StyledHTML() string { return tableCSS + t.HTML() }

// tableCSS styles tables: text left, numbers right (the class is doubled
// to win over JupyterLab's right-aligned cells in exported notebooks);
// CJK text breaks only where Latin text would, not after any character.
const tableCSS = `<style>table.synclab{border-collapse:collapse;margin:0.5em 0;font-size:13px;display:block;overflow-x:auto;max-width:100%}
table.synclab caption{font-weight:bold;text-align:left;padding:4px 0}
table.synclab.synclab th,table.synclab.synclab td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;word-break:keep-all}
table.synclab.synclab td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.synclab th{background:#f3f3f3}
details.synclab-terms{font-size:13px;margin:0 0 0.8em}
details.synclab-terms dt{font-family:monospace;margin-top:2px}
details.synclab-terms dd{margin:0 0 0 1.5em;color:#444}</style>`
