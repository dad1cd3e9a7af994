package nbexport

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// finishPage makes nbconvert's page a report: require.js and MathJax
// inlined, the markdown cells' HTML sanitised, the table of contents
// filled in, the report's styles added.
func finishPage(tools Tools, page []byte, nonce string, mdCells int) ([]byte, error) {
	page, err := inlineAssets(tools, page)
	if err != nil {
		return nil, err
	}
	s, err := sanitizeMarkdownCells(string(page), nonce, mdCells)
	if err != nil {
		return nil, err
	}
	s = strings.Replace(s, tocPlaceholder, tableOfContents(s), 1)
	s = strings.Replace(s, "</head>", reportCSS+"</head>", 1)
	return []byte(s), nil
}

// sanitizeMarkdownCells sanitises the HTML between each markdown cell's
// markers and removes the markers; there must be one pair per cell.
func sanitizeMarkdownCells(page, nonce string, cells int) (string, error) {
	begin, end := mdBegin(nonce), mdEnd(nonce)
	if n, m := strings.Count(page, begin), strings.Count(page, end); n != cells || m != cells {
		return "", fmt.Errorf("found %d/%d markers of the %d markdown cells in nbconvert's HTML (template changed?)", n, m, cells)
	}
	var b strings.Builder
	for {
		i := strings.Index(page, begin)
		if i < 0 {
			b.WriteString(page)
			return b.String(), nil
		}
		j := i + strings.Index(page[i:], end)
		b.WriteString(strings.TrimSuffix(page[:i], "<p>"))
		body := strings.TrimSuffix(strings.TrimPrefix(page[i+len(begin):j], "</p>"), "<p>")
		b.WriteString(sanitizeHTML(body))
		page = strings.TrimPrefix(page[j+len(end):], "</p>")
	}
}

var (
	headingRE = regexp.MustCompile(`(?s)<h([23]) id="([^"]+)"[^>]*>(.*?)</h[23]>`)
	anyTag    = regexp.MustCompile(`(?s)<[^>]*>`)
)

// tableOfContents lists the page's level-2 and level-3 headings as links.
func tableOfContents(page string) string {
	var b strings.Builder
	b.WriteString("<ul>")
	open := false // a nested list of level-3 headings
	for _, m := range headingRE.FindAllStringSubmatch(page, -1) {
		text := strings.TrimSuffix(strings.TrimSpace(html.UnescapeString(anyTag.ReplaceAllString(m[3], ""))), "¶")
		link := fmt.Sprintf(`<a href="#%s">%s</a>`, html.EscapeString(html.UnescapeString(m[2])), html.EscapeString(text))
		switch {
		case m[1] == "3" && !open:
			b.WriteString("<ul><li>" + link)
			open = true
		case m[1] == "3":
			b.WriteString("</li><li>" + link)
		case open:
			b.WriteString("</li></ul></li><li>" + link)
			open = false
		default:
			b.WriteString("<li>" + link)
		}
	}
	if open {
		b.WriteString("</li></ul>")
	}
	b.WriteString("</li></ul>")
	return strings.Replace(b.String(), "<ul></li></ul>", "<ul></ul>", 1)
}

// reportCSS styles the report: a readable column, no prompts, the title
// block, tables that scroll in their box, print layout (wide enough for
// the charts, no data links).
const reportCSS = `<style>
body.jp-Notebook { max-width: 1060px; margin: 0 auto; padding: 1.5em 1em 3em; }
.jp-Cell { padding: 2px 0; }
.jp-RenderedHTMLCommon table, table.synclab { display: block; overflow-x: auto; max-width: 100%; }
.synclab-titleblock { margin-bottom: .5em; }
.synclab-toc { border-bottom: 1px solid #ddd; margin-bottom: 1em; padding-bottom: .6em; }
.synclab-title { font-size: 1.9em; margin: .2em 0 .4em; }
.synclab-meta { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; font-size: .92em; margin: 0 0 .8em; }
.synclab-meta dt { font-weight: 600; color: #555; } .synclab-meta dd { margin: 0; }
.synclab-toc-title, .synclab-summary-title { font-weight: 600; font-size: 1.1em; margin: .6em 0 .2em; }
.celltag_synclab-title .jp-RenderedMarkdown { background: #f5f8fc; border-left: 3px solid #4e79a7; padding: .2em 1em; }
.synclab-toc ul { margin: 0; padding-left: 1.4em; } .synclab-toc li { margin: .1em 0; }
.synclab-data { font-size: .85em; margin: -.2em 0 1em; }
.synclab-stamp { border-top: 1px solid #ddd; margin-top: 2em; font-size: .92em; }
.synclab-stamp td code { white-space: normal; word-break: break-all; } /* hashes, not words */
.jp-OutputArea-output pre { word-break: normal; overflow-wrap: anywhere; } /* a long printed line wraps at a space, not mid-word */
@media print {
  @page { size: 300mm 424mm; margin: 12mm; } /* A-series proportions, wide enough for 960 px charts */
  body.jp-Notebook { max-width: none; padding: 0; }
  .synclab-data { display: none; }
  .jp-OutputArea-output, .jp-RenderedHTMLCommon table, table.synclab { overflow: visible !important; }
  .synclab-chart, .jp-OutputArea-child, table { break-inside: avoid; }
}
</style>
`

var (
	requireTag = regexp.MustCompile(`<script src="` + regexp.QuoteMeta(requireJSPlaceholder) + `">\s*</script>`)
	// nbconvert's mathjax macro: the loader tag, then an inline MathJax 2 configuration.
	mathJaxBlock = regexp.MustCompile(`(?s)<!-- Load mathjax -->\s*<script src="` + regexp.QuoteMeta(mathJaxPlaceholder) +
		`">\s*</script>.*?<!-- End of mathjax configuration -->`)
	scriptOrStyle = regexp.MustCompile(`(?is)<script\b.*?</script>|<style\b.*?</style>`)
	// $...$ as pandoc reads it: no space inside either dollar, no digit right after the closing one.
	mathSyntax = regexp.MustCompile(`\$\$|\\\(|\\\[|\\begin\{|\$[^\s$<>]([^$<>\n]*[^\s$<>\\])?\$([^0-9]|$)`)
)

// mathJaxConfig configures MathJax 3 like nbconvert's MathJax 2 setup (TeX delimiters, AMS numbering).
const mathJaxConfig = `<script>window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
        processEscapes: true, processEnvironments: true, tags: 'ams'},
  svg: {fontCache: 'global'}
};</script>
`

// inlineScript returns a <script> element holding the file's code.
func inlineScript(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w (run scripts/setup.sh to fetch the offline assets)", err)
	}
	return "<script>\n" + EscapeScript(string(b)) + "\n</script>", nil
}

// EscapeScript makes JavaScript text safe to place inside a <script> element: it writes every
// "</script" (in any case, which would end the element) as "<\/script", which means the same in
// JavaScript strings, regular expressions and comments. labkit uses it for the charts too.
func EscapeScript(js string) string {
	var b strings.Builder
	b.Grow(len(js))
	for {
		i := strings.Index(js, "</")
		if i < 0 {
			break
		}
		b.WriteString(js[:i+1]) // up to the '<'
		js = js[i+1:]           // from the '/'
		if len(js) >= 7 && strings.EqualFold(js[1:7], "script") {
			b.WriteByte('\\')
		}
	}
	b.WriteString(js)
	return b.String()
}

// needsMath reports whether a page's text (outside scripts and styles) contains TeX math.
func needsMath(page []byte) bool {
	return mathSyntax.Match(scriptOrStyle.ReplaceAll(page, nil))
}

// inlineAssets replaces nbconvert's require.js and MathJax loaders by inlined local copies; MathJax
// is dropped when the page has no math.
func inlineAssets(tools Tools, page []byte) ([]byte, error) {
	if !requireTag.Match(page) {
		return nil, errors.New("nbconvert output has no require.js loader to inline (template changed?)")
	}
	req, err := inlineScript(filepath.Join(tools.Dir(), "requirejs", "require.js"))
	if err != nil {
		return nil, err
	}
	page = requireTag.ReplaceAllLiteral(page, []byte(req))
	if !mathJaxBlock.Match(page) {
		return nil, errors.New("nbconvert output has no MathJax loader to replace (template changed?)")
	}
	mj := "<!-- MathJax omitted: no math on this page -->"
	if needsMath(page) {
		s, err := inlineScript(filepath.Join(tools.Dir(), "mathjax", "tex-svg.js"))
		if err != nil {
			return nil, err
		}
		mj = mathJaxConfig + s
	}
	return mathJaxBlock.ReplaceAllLiteral(page, []byte(mj)), nil
}

var (
	scriptSrc = regexp.MustCompile(`(?is)<script\b[^>]*\bsrc\s*=\s*["']?([^"'\s>]+)`)
	linkHref  = regexp.MustCompile(`(?is)<link\b[^>]*\bhref\s*=\s*["']?(https?:[^"'\s>]+|//[^"'\s>]+)`)
	// fmtError is what Go's fmt writes for a verb without its argument, an
	// argument without its verb, or a bad width: a text the reader would see garbled.
	fmtError   = regexp.MustCompile(`%!([a-zA-Z]\(|\((EXTRA|NOVERB|BADWIDTH|BADPREC|BADINDEX))`)
	chartDiv   = regexp.MustCompile(`<div id="([^"]+)" class="synclab-chart"`)
	cellDiv    = regexp.MustCompile(`<div class="jp-Cell [^"]*"`) // nbconvert's lab template, tags as celltag_ classes
	cellTagRE  = regexp.MustCompile(`\bcelltag_` + cellTagPrefix + `(\d+)\b`)
	echartsLib = []byte(`.echarts={})}`) // the UMD header of the inlined ECharts build
	noLibrary  = []byte("SyncLab: charts cannot be drawn")
)

// Charts returns the ids of the charts (labkit's <div class="synclab-chart">) in a page.
func Charts(page []byte) []string {
	var ids []string
	for _, m := range chartDiv.FindAllSubmatch(page, -1) {
		ids = append(ids, string(m[1]))
	}
	return ids
}

// ChartsByCell returns the ids of the charts in a report by the code cell
// that drew them, keyed by the cell's number in the notebook (every cell
// counts, from 1, as in the export's errors); the charts of cells the
// export added (title block, stamp) are under 0.
func ChartsByCell(page []byte) map[int][]string {
	out := map[int][]string{}
	starts := cellDiv.FindAllIndex(page, -1)
	cellOf := func(at int) int { // the cell whose div starts last before at
		n := 0
		for _, s := range starts {
			if s[0] > at {
				break
			}
			n = 0
			if m := cellTagRE.FindSubmatch(page[s[0]:s[1]]); m != nil {
				n, _ = strconv.Atoi(string(m[1]))
			}
		}
		return n
	}
	for _, m := range chartDiv.FindAllSubmatchIndex(page, -1) {
		n := cellOf(m[0])
		out[n] = append(out[n], string(page[m[2]:m[3]]))
	}
	return out
}

// Check verifies that a page needs no network: no <script src> other than data: URLs, no
// stylesheet from the web, and, when it has charts, the ECharts library inlined; and that
// no text on it was garbled by a format string (a "%" in a Go format that is not a verb).
func Check(page []byte) error {
	if i := fmtError.FindIndex(page); i != nil {
		return fmt.Errorf("a text was formatted wrongly (Go's fmt wrote %q: a %% in a format string that is no verb, or a verb without its argument): %q",
			page[i[0]:i[1]], page[max(0, i[0]-60):min(len(page), i[1]+30)])
	}
	var problems []string
	for _, m := range scriptSrc.FindAllSubmatch(page, -1) {
		if src := string(m[1]); !strings.HasPrefix(src, "data:") {
			problems = append(problems, "external script "+src)
		}
	}
	for _, m := range linkHref.FindAllSubmatch(page, -1) {
		problems = append(problems, "external stylesheet/link "+string(m[1]))
	}
	if n := len(Charts(page)); n > 0 {
		if !bytes.Contains(page, echartsLib) {
			problems = append(problems, fmt.Sprintf("%d chart(s) but no inlined ECharts library", n))
		}
	}
	if bytes.Contains(page, noLibrary) {
		problems = append(problems, "charts not drawn: no local ECharts copy when the notebook ran (run make setup)")
	}
	if len(problems) > 0 {
		return fmt.Errorf("page is not self-contained: %s", strings.Join(problems, "; "))
	}
	return nil
}
