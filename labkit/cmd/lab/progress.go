package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"synclab/labkit"
)

// terminalProgress draws a progress bar on w when it is a terminal, and
// otherwise leaves the choice to labkit (nil: nothing outside a notebook).
func terminalProgress(w io.Writer) labkit.Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: f}
	}
	return nil
}

type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(label string, total int) {
	p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(label), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
}
func (p *barProgress) Step()   { _ = p.bar.Add(1) }
func (p *barProgress) Finish() { _ = p.bar.Finish() }
