package labkit

import (
	"fmt"
	"html"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
)

// Progress receives the runner's progress. Calls are serialised.
type Progress interface {
	Start(label string, total int)
	Step()
	Finish()
}

// NoProgress reports nothing.
var NoProgress Progress = noProgress{}

type noProgress struct{}

func (noProgress) Start(string, int) {}
func (noProgress) Step()             {}
func (noProgress) Finish()           {}

// AutoProgress picks an in-place progress line in a GoNB notebook, and
// nothing otherwise. (The lab command draws its own bar on a terminal:
// labkit leaves terminal libraries out of every notebook cell's link.)
func AutoProgress() Progress {
	if gonbui.IsNotebook {
		return &notebookProgress{}
	}
	return NoProgress
}

// notebookProgress updates one transient HTML line at most every 200 ms and
// clears it when done.
type notebookProgress struct {
	id          string
	label       string
	done, total int
	start, last time.Time
}

func (p *notebookProgress) Start(label string, total int) {
	*p = notebookProgress{id: "synclab-progress-" + gonbui.UniqueId(), label: label, total: total, start: time.Now()}
	p.show()
}

func (p *notebookProgress) Step() {
	p.done++
	if time.Since(p.last) > 200*time.Millisecond || p.done == p.total {
		p.show()
	}
}

func (p *notebookProgress) show() {
	p.last = time.Now()
	pct := 100 * float64(p.done) / float64(max(p.total, 1))
	gonbui.UpdateHTML(p.id, fmt.Sprintf(`<div style="font-family:monospace">%s: %d/%d runs <progress value="%d" max="%d"></progress> %.0f%% %s</div>`,
		html.EscapeString(p.label), p.done, p.total, p.done, p.total, pct, time.Since(p.start).Round(100*time.Millisecond)))
}

func (p *notebookProgress) Finish() { gonbui.UpdateHTML(p.id, "") }
