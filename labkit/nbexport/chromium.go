package nbexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"synclab/labkit/internal/atomicfile"
	"time"
)

// ChromiumPath returns the headless browser used by CheckInChromium: $SYNCLAB_CHROMIUM, else
// chromium (Debian), chromium-browser or google-chrome on PATH; "" when there is none.
func ChromiumPath() string {
	if p := os.Getenv("SYNCLAB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// netnsWorks reports whether `unshare --net` can run a command in an empty network namespace
// (root on Linux): the strongest way to take the network away from the browser.
func netnsWorks(ctx context.Context) bool {
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.CommandContext(ctx, "unshare", "--net", "true").Run() == nil
}

// chromium runs headless Chromium on a local HTML file with the network off (an empty network
// namespace when possible, and in any case a proxy that refuses every connection), letting its
// scripts run for budget of virtual time, with the given output flags; it returns stdout.
func chromium(ctx context.Context, htmlPath string, budget time.Duration, output ...string) ([]byte, error) {
	browser := ChromiumPath()
	if browser == "" {
		return nil, errors.New("no chromium found (Debian: apt-get install chromium, or set SYNCLAB_CHROMIUM)")
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "nbexport-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile, "--window-size=1200,900",
		// Network off: every connection goes to a proxy on the discard port, which refuses it.
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--virtual-time-budget=" + strconv.Itoa(int(budget.Milliseconds())),
	}
	args = append(append(args, output...), "file://"+abs)
	name := browser
	if netnsWorks(ctx) {
		args = append([]string{"--net", browser}, args...)
		name = "unshare"
	}
	ctx, cancel := context.WithTimeout(ctx, budget+90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", browser, err, tail(stderr.String(), 15))
	}
	return stdout.Bytes(), nil
}

// RenderedDOM opens a local HTML file in headless Chromium with the network off, lets its scripts
// run for budget of virtual time, and returns the DOM it ended with.
func RenderedDOM(ctx context.Context, htmlPath string, budget time.Duration) ([]byte, error) {
	dom, err := chromium(ctx, htmlPath, budget, "--dump-dom")
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(dom, []byte("<html")) {
		return nil, fmt.Errorf("chromium printed no DOM for %s", htmlPath)
	}
	return dom, nil
}

// PrintPDF prints a local HTML report to pdfPath with headless Chromium, network off, once its
// scripts (the charts) have run.
func PrintPDF(ctx context.Context, htmlPath, pdfPath string) error {
	if err := atomicfile.CheckOutput(pdfPath); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "nbexport-pdf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Chromium prints to a file of its own; the PDF replaces pdfPath whole.
	printed := filepath.Join(tmp, "report.pdf")
	if _, err := chromium(ctx, htmlPath, 10*time.Second, "--no-pdf-header-footer", "--print-to-pdf="+printed); err != nil {
		return err
	}
	b, err := os.ReadFile(printed)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		return fmt.Errorf("chromium wrote no PDF for %s (%v)", pdfPath, err)
	}
	return atomicfile.Write(ctx, pdfPath, b, 0o644)
}

var canvasTag = regexp.MustCompile(`<canvas\b[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"`)

// DrawnCharts checks a rendered DOM against the chart ids of the static page: each chart's element
// must have been initialised by ECharts (_echarts_instance_) and hold a canvas of non-zero size.
// It returns the ids that were not drawn.
func DrawnCharts(dom []byte, ids []string) (missing []string) {
	s := string(dom)
	for _, id := range ids {
		i := strings.Index(s, `id="`+id+`"`)
		if i < 0 {
			missing = append(missing, id+" (element gone)")
			continue
		}
		start := strings.LastIndex(s[:i], "<div")
		end := len(s)
		if j := strings.Index(s[i:], `class="synclab-chart"`); j >= 0 {
			if k := strings.Index(s[i+j+1:], `class="synclab-chart"`); k >= 0 {
				end = i + j + 1 + k
			}
		}
		if k := strings.Index(s[i:end], "<script"); k >= 0 {
			end = i + k // the chart's own script follows its element
		}
		if start < 0 {
			start = i
		}
		el := s[start:end]
		openTag := el
		if k := strings.Index(el, ">"); k >= 0 {
			openTag = el[:k]
		}
		if !strings.Contains(openTag, "_echarts_instance_") {
			missing = append(missing, id+" (ECharts never initialised it)")
			continue
		}
		m := canvasTag.FindStringSubmatch(el)
		if m == nil || m[1] == "0" || m[2] == "0" {
			missing = append(missing, id+" (no drawn canvas)")
		}
	}
	return missing
}

// CheckInChromium opens an exported report in headless Chromium with the network off and verifies
// that the page has no external script and that every chart was drawn; a chart that was not is
// named with its cell (ChartsByCell). It returns the number of charts checked.
func CheckInChromium(ctx context.Context, htmlPath string) (int, error) {
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		return 0, err
	}
	if err := Check(page); err != nil {
		return 0, fmt.Errorf("%s: %w", htmlPath, err)
	}
	ids := Charts(page)
	dom, err := RenderedDOM(ctx, htmlPath, 5*time.Second)
	if err != nil {
		return 0, err
	}
	byCell := ChartsByCell(page)
	var missing []string
	for _, n := range slices.Sorted(maps.Keys(byCell)) {
		for _, m := range DrawnCharts(dom, byCell[n]) {
			missing = append(missing, fmt.Sprintf("cell %d: %s", n, m))
		}
	}
	if len(missing) > 0 {
		return len(ids), fmt.Errorf("%s: %d of %d chart(s) not drawn with the network off: %s",
			htmlPath, len(missing), len(ids), strings.Join(missing, ", "))
	}
	return len(ids), nil
}
