package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"synclab/labkit"
	"synclab/platforms"
)

// The markers around README.md's generated "What the models say so far"
// section.
const (
	ReadmeBegin = "<!-- results:begin -->"
	ReadmeEnd   = "<!-- results:end -->"
)

// Splice replaces what lies between ReadmeBegin and ReadmeEnd in doc with
// section (the markers stay, a blank line either side of the section).
// Exactly one begin marker, before exactly one end marker, is required.
func Splice(doc, section string) (string, error) {
	if strings.Count(doc, ReadmeBegin) != 1 || strings.Count(doc, ReadmeEnd) != 1 {
		return "", fmt.Errorf("want exactly one %s and one %s, found %d and %d",
			ReadmeBegin, ReadmeEnd, strings.Count(doc, ReadmeBegin), strings.Count(doc, ReadmeEnd))
	}
	head, rest, _ := strings.Cut(doc, ReadmeBegin)
	_, tail, ok := strings.Cut(rest, ReadmeEnd)
	if !ok {
		return "", fmt.Errorf("%s comes before %s", ReadmeEnd, ReadmeBegin)
	}
	return head + ReadmeBegin + "\n\n" + section + "\n" + ReadmeEnd + tail, nil
}

// Readme writes README.md's "What the models say so far" section: the
// articles' tables beside the models' numbers with the ledger's verdicts,
// what the ESP32's kernel-path costs allow, and the whole ledger. Every
// number comes from results (the ledger's runs, by name), the experiments'
// parameters or the article's own tables.
func (l Ledger) Readme(results map[string]*labkit.Result, js []Judgement) string {
	verdict := map[string]string{}
	for _, j := range js {
		verdict[j.ID] = fmt.Sprintf("**%s**: %s", j.Verdict, j.WhyText())
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := func(run, variant, metric string) float64 { return results[run].Summary(variant, 0, metric).Mean }

	arm, _ := l.Article("arm")
	rk := results["rk-main"]
	w("Article 2, %s, on the RK3399 model (`lab run rk3399-spinlock-wait`: %d repeats, default parameters):\n\n", arm.Cite(), rk.Experiment.Repeats)
	w("| metric | article WFE | model WFE | article WFI | model WFI | verdict |\n|---|---|---|---|---|---|\n")
	for _, row := range []struct{ label, metric, claim string }{
		{"mean lock wait (ms)", "avg_lock_wait_ms", "arm-table-wait"},
		{"throughput (ops/s)", "throughput_ops_s", "arm-table-throughput"},
		{"power (mW)", "power_mw", "arm-table-power"},
	} {
		w("| %s | %s | %s | %s | %s | %s |\n", row.label, num(ref(rk, "wfe", row.metric)), num(m("rk-main", "wfe", row.metric)),
			num(ref(rk, "wfi", row.metric)), num(m("rk-main", "wfi", row.metric)), cell(verdict[row.claim]))
	}
	w("\nThe WFE wait depends on critical-section and outside-work lengths the article does not give (ASSUME parameters, not\n" +
		"tuned); `04-sensitivity.ipynb` shows which conclusions survive their ranges.\n\n")

	esp, _ := l.Article("esp32")
	es := results["esp-main"]
	iters := es.Experiment.Params.Get("iterations")
	w("Article 1, %s, on the ESP32 model (`lab run esp32-critical-section -repeats %d`: %g tasks x %s increments):\n\n", esp.Cite(), es.Experiment.Repeats, es.Experiment.Params.Get("tasks"), num(iters))
	w("| metric | article mutex | model mutex | article notify | model notify | verdict |\n|---|---|---|---|---|---|\n")
	w("| time per task iteration (ns) | %s | %s | %s | %s | %s |\n", num(ref(es, "mutex", "ns_per_op")), num(m("esp-main", "mutex", "ns_per_op")),
		num(ref(es, "notify", "ns_per_op")), num(m("esp-main", "notify", "ns_per_op")), cell(verdict["esp-table-time"]))
	cpu := func(src func(v, k string) float64, v string) string {
		return num(src(v, "cpu_core0_pct")) + " / " + num(src(v, "cpu_core1_pct"))
	}
	art := func(v, k string) float64 { return ref(es, v, k) }
	sim := func(v, k string) float64 { return m("esp-main", v, k) }
	w("| CPU use core 0 / 1 (%%) | %s | %s | %s | %s | %s |\n", cpu(art, "mutex"), cpu(sim, "mutex"), cpu(art, "notify"), cpu(sim, "notify"), cell(verdict["esp-table-cpu"]))
	w("| max interrupt latency (µs) | %s | %s | %s | %s | %s |\n", num(ref(es, "mutex", "max_irq_latency_us")), num(m("esp-main", "mutex", "max_irq_latency_us")),
		num(ref(es, "notify", "max_irq_latency_us")), num(m("esp-main", "notify", "max_irq_latency_us")), cell(verdict["esp-table-irq"]))
	per := func(v string) float64 {
		return 1000 * m("esp-main", v, "handoffs") / m("esp-main", v, "expected_counter")
	}
	turn := m("esp-main", "mutex", "expected_counter") / m("esp-main", "mutex", "handoffs")
	w("| guard hand-offs per 1,000 increments | – | %s | – | %s | the mutex changes hands every %.1f increments (a result of the take and give paths); notify's figure is the handshake's strict alternation: an input, not a result |\n\n",
		num(per("mutex")), num(per("notify")), turn)
	b.WriteString(espBudget(es, results, m))

	w("\nEvery claim of both articles is in the claims ledger (`data/claims/claims.json`; `lab claims` prints it, `notebooks/06-claims.ipynb` shows it): %s.\n\n", CountsText(js))
	w("<details><summary>The claims ledger (%d claims)</summary>\n\n| claim | article, § | verdict | magnitude |\n|---|---|---|---|\n", len(js))
	caveat := ""
	for _, j := range js {
		mag := j.Magnitude
		if mag == "" {
			mag = j.Why
		}
		verdict := string(j.Verdict)
		if j.Caveat != "" { // as lab claims marks it: the magnitude rests on hand-off times
			verdict, caveat = verdict+" (hand-off caveat)", j.Caveat
		}
		w("| %s | %s %s | %s | %s |\n", cell(j.Claim.Claim), j.Article.ID, cell(j.Section), verdict, cell(mag))
	}
	if caveat != "" {
		w("\n*Hand-off caveat*, on the verdicts marked so: %s.\n", caveat)
	}
	w("\n</details>\n")
	return b.String()
}

// espBudget is the paragraph on what the ESP32's kernel-path costs allow:
// the article's times in cycles per increment against the serial paths
// built from the experiment's parameters (defaults, and the Low end of
// every ASSUME range).
func espBudget(es *labkit.Result, results map[string]*labkit.Result, m func(run, variant, metric string) float64) string {
	ps := es.Experiment.Params
	mhz := ps.Get("cpu_mhz")
	incs := ps.Get("tasks") * ps.Get("iterations")
	budget := func(v string) float64 { return ref(es, v, "total_ms") * 1e3 * mhz / incs } // ms x 1e3 us x MHz cycles/us
	sum := func(low bool, keys ...string) float64 {
		s := 0.0
		for _, k := range keys {
			p, _ := ps.Lookup(k)
			s += pick(p, low)
		}
		return s
	}
	mutex := func(low bool) float64 { return sum(low, "sem_take_body_cycles", "sem_give_body_cycles") }
	// The handshake's give and take take xKernelLock three times (tasks.c:
	// once in xTaskGenericNotify, twice in ulTaskGenericNotifyTake).
	handshake := sum(true, "spinlock_pair_cycles", "spinlock_pair_cycles", "spinlock_pair_cycles", "notify_body_cycles", "notify_body_cycles", "crosscore_trigger_cycles",
		"crosscore_latency_cycles", "irq_entry_cycles", "crosscore_isr_cycles", "switch_select_cycles", "switch_save_restore_cycles")
	inv := func(v string) float64 { return results["esp-inversion"].Summary(v, 0, "high_blocked_us").Mean / 1000 }
	align, same := 0.0, true
	for _, pair := range [][2]string{{"esp-align8", "esp-align64"}, {"esp-psram8", "esp-psram64"}} {
		for _, v := range []string{"mutex", "notify"} {
			x, y := m(pair[0], v, "ns_per_op"), m(pair[1], v, "ns_per_op")
			align = math.Max(align, math.Abs(pct(y, x)))
			same = same && slices.Equal(results[pair[0]].Values(v, 0, "ns_per_op"), results[pair[1]].Values(v, 0, "ns_per_op"))
		}
	}
	alignText := fmt.Sprintf("changes the time by at most %.2f%%", align)
	if same {
		alignText = "changes nothing (the same seeds give the same times to the last bit, in SRAM and in PSRAM)"
	}
	un := results["esp-unblock"]
	faster := -pct(un.Summary("notify", 0, "unblock_us").Mean, un.Summary("binary-semaphore", 0, "unblock_us").Mean)
	return fmt.Sprintf("With kernel-path costs bounded by ESP-IDF's own performance tests, neither published time is reachable: the\n"+
		"article's times leave %.1f and %.1f cycles per increment, while the mutex path holds the queue's portMUX for %s cycles\n"+
		"(%s at the low end of every assumed range), and the handshake's waiter alone, woken by a crosscore interrupt and a context\n"+
		"switch at each hand-off, needs %.1fx the budget even at the low end (the giver's own yield interrupt and switch, which\n"+
		"the model also takes, not counted). A portMUX critical section alone costs %s ns per task iteration. The\n"+
		"article's warning about priority inheritance holds (`esp32-priority-inversion`: %s ms blocking with a mutex, %s ms with\n"+
		"a semaphore or notification); 64-byte alignment %s, since internal SRAM has no data cache and\n"+
		"each PSRAM line lives in one core's cache, whichever core accesses it, so no line moves between cores; a notification unblocks a task %.0f%% faster than a binary semaphore, not the 35%%\n"+
		"FreeRTOS documents against the binary semaphore of V8.2.0 and later (45%% against older ones) for single-core parts\n"+
		"(SMP IDF pays the same crosscore yield and switch for both).\n",
		budget("mutex"), budget("notify"), num(mutex(false)), num(mutex(true)), handshake/budget("notify"),
		num(m("esp-main", "critical", "ns_per_op")), num(inv("mutex")), num(math.Min(inv("binary-semaphore"), inv("notify"))), alignText, faster)
}

// pick is a parameter's default, or with low the Low end of an ASSUME
// range.
func pick(p platforms.Param, low bool) float64 {
	if low && p.Prov == platforms.ASSUME {
		return p.Low
	}
	return p.Value
}

// ref returns the article's number for variant and metric of res's
// experiment (NaN when it has none).
func ref(res *labkit.Result, variant, metric string) float64 {
	for _, r := range res.Experiment.Reference {
		if r.Variant == variant && r.Metric == metric {
			return r.Value
		}
	}
	return math.NaN()
}

// cell makes s one Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}
