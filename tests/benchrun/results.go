package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// row is one figure of one system: the median (and where it applies the
// p99) of its runs.
type row struct {
	Scenario string   `json:"scenario"`
	System   string   `json:"system"`
	Figure   string   `json:"figure"`
	Unit     string   `json:"unit"`
	Runs     int      `json:"runs"`
	Median   float64  `json:"median"`
	P99      *float64 `json:"p99,omitempty"`
	// Better is "lower" or "higher".
	Better string `json:"better"`
	// Values are the runs' values (for latency: the medians of the blocks
	// of operations that ratios are paired over).
	Values []float64 `json:"values"`
	Note   string    `json:"note,omitempty"`
}

// ratio is Sluice/Connect for one figure: the median over paired runs of
// sluice_i / connect_i.
type ratio struct {
	Scenario string  `json:"scenario"`
	Figure   string  `json:"figure"`
	Unit     string  `json:"unit"`
	Pairs    int     `json:"pairs"`
	Ratio    float64 `json:"ratio"`
	Better   string  `json:"better"`
}

// machine describes where the figures were taken.
type machine struct {
	Cores     int     `json:"cores"`
	MemoryGiB float64 `json:"memory_gib"`
	CPUModel  string  `json:"cpu_model"`
	Go        string  `json:"go"`
	Java      string  `json:"java"`
	Kernel    string  `json:"kernel"`
	Load      string  `json:"load_at_start"`
	Broker    string  `json:"broker"`
}

// report is bench/results.json.
type report struct {
	Started  string   `json:"started"`
	Scale    string   `json:"scale"`
	Peer     string   `json:"peer"`
	WallSecs float64  `json:"wall_seconds"`
	Machine  machine  `json:"machine"`
	Rows     []row    `json:"rows"`
	Ratios   []ratio  `json:"ratios,omitempty"`
	Errors   []string `json:"errors,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// p99 is the nearest-rank 99th percentile of xs.
func p99(xs []float64) float64 { return percentile(xs, 0.99) }

// percentile is the nearest-rank q-quantile of xs (0 < q ≤ 1), NaN for
// none.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

// add records a figure from per-run values.
func (b *bench) add(scenario, system, figure, unit, better string, values []float64, note string) {
	b.rep.Rows = append(b.rep.Rows, row{Scenario: scenario, System: system, Figure: figure, Unit: unit,
		Runs: len(values), Median: median(values), Better: better, Values: values, Note: note})
	b.logf("  %-8s %-48s %10s %s (runs %v)", system, figure, fmtNum(median(values)), unit, roundAll(values))
}

// addLatency records a latency figure: median and p99 over every operation,
// and the medians of its blocks as the values ratios pair. Operations that
// failed (failed of them, the first answering firstErr) are named in the
// row's note.
func (b *bench) addLatency(scenario, system, figure string, ops []float64, blocks []float64, failed int, firstErr string) {
	note := fmt.Sprintf("over %d operations in %d alternating blocks", len(ops), len(blocks))
	if failed > 0 {
		note += fmt.Sprintf("; %d more failed and are not timed (the first: %s)", failed, firstErr)
	}
	b.addSpread(scenario, system, figure, ops, blocks, note)
}

// addSpread records a latency figure (ms, lower is better) taken over many
// operations: the median and p99 over ops, and values (the medians of
// blocks, or of runs) as what ratios pair.
func (b *bench) addSpread(scenario, system, figure string, ops, values []float64, note string) {
	p := p99(ops)
	b.rep.Rows = append(b.rep.Rows, row{Scenario: scenario, System: system, Figure: figure, Unit: "ms",
		Runs: len(ops), Median: median(ops), P99: &p, Better: "lower", Values: values, Note: note})
	b.logf("  %-8s %-48s median %s ms, p99 %s ms", system, figure, fmtNum(median(ops)), fmtNum(p))
}

// computeRatios pairs every Sluice row with each Connect row of the same
// scenario whose figure is the same, or the same with a bracketed Connect
// setting after it (" [scheduled.rebalance.max.delay.ms=0]"). A ratio is
// keyed by the Connect row's figure.
func (b *bench) computeRatios() {
	b.rep.Ratios = nil
	for _, s := range b.rep.Rows {
		if s.System != sysSluice || s.Better == "info" {
			continue
		}
		for _, c := range b.rep.Rows {
			if c.System != sysConnect || c.Scenario != s.Scenario ||
				(c.Figure != s.Figure && !strings.HasPrefix(c.Figure, s.Figure+" [")) {
				continue
			}
			n := min(len(s.Values), len(c.Values))
			var rs []float64
			for i := range n {
				if c.Values[i] != 0 {
					rs = append(rs, s.Values[i]/c.Values[i])
				}
			}
			if len(rs) > 0 {
				b.rep.Ratios = append(b.rep.Ratios, ratio{Scenario: c.Scenario, Figure: c.Figure, Unit: s.Unit,
					Pairs: len(rs), Ratio: median(rs), Better: s.Better})
			}
		}
	}
}

// ratioFor returns the ratio of a figure, if any.
func (b *bench) ratioFor(scenario, figure string) (ratio, bool) {
	for _, r := range b.rep.Ratios {
		if r.Scenario == scenario && r.Figure == figure {
			return r, true
		}
	}
	return ratio{}, false
}

// writeTable prints the results as a Markdown table.
func (b *bench) writeTable(w io.Writer) {
	peer := b.peer == sysConnect
	fmt.Fprintf(w, "| scenario | figure | system | unit | runs | median | p99 |%s\n", map[bool]string{true: " Sluice/Connect (on the Connect row) |", false: ""}[peer])
	fmt.Fprintf(w, "| --- | --- | --- | --- | ---: | ---: | ---: |%s\n", map[bool]string{true: " ---: |", false: ""}[peer])
	for _, r := range b.rep.Rows {
		p := ""
		if r.P99 != nil {
			p = fmtNum(*r.P99)
		}
		fig := r.Figure
		if r.Note != "" && r.P99 == nil {
			fig += " (" + r.Note + ")"
		}
		line := fmt.Sprintf("| %s | %s | %s | %s | %d | %s | %s |", r.Scenario, fig, r.System, r.Unit, r.Runs, fmtNum(r.Median), p)
		if peer {
			cell := ""
			if ra, ok := b.ratioFor(r.Scenario, r.Figure); ok && r.System == sysConnect {
				cell = fmt.Sprintf("%.2f× (%s is better; %d pairs)", ra.Ratio, ra.Better, ra.Pairs)
			}
			line += " " + cell + " |"
		}
		fmt.Fprintln(w, line)
	}
}

// write saves results.json and results.md next to it.
func (b *bench) write() error {
	if err := os.MkdirAll(filepath.Dir(b.out), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(b.rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(b.out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	m := b.rep.Machine
	fmt.Fprintf(&sb, "Run %s, scale %s, peer %s, %.0f s wall. Machine: %d cores (%s), %.0f GiB, %s; %s; load at start %s; broker %s.\n\n",
		b.rep.Started, b.rep.Scale, b.rep.Peer, b.rep.WallSecs, m.Cores, m.CPUModel, m.MemoryGiB, m.Go, m.Java, m.Load, m.Broker)
	b.writeTable(&sb)
	for _, n := range b.rep.Notes {
		fmt.Fprintf(&sb, "\n- %s", n)
	}
	for _, e := range b.rep.Errors {
		fmt.Fprintf(&sb, "\n- ERROR: %s", e)
	}
	sb.WriteString("\n")
	md := strings.TrimSuffix(b.out, filepath.Ext(b.out)) + ".md"
	return os.WriteFile(md, []byte(sb.String()), 0o644)
}

// fmtNum formats a figure with about three significant digits.
func fmtNum(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return "—"
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	case a >= 10:
		return fmt.Sprintf("%.2f", x)
	default:
		return fmt.Sprintf("%.3g", x)
	}
}

func roundAll(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmtNum(x)
	}
	return out
}

// render prints the table of a results.json again (`benchrun render FILE`),
// with the ratios recomputed.
func render(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b := &bench{}
	if err := json.Unmarshal(data, &b.rep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if b.rep.Peer == sysConnect {
		b.peer = sysConnect
	}
	b.computeRatios()
	b.writeTable(os.Stdout)
	return nil
}
