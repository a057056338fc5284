package main

import (
	"testing"
)

// TestPGSystemsRatios: scenario 9 measures the native connector alone
// without Debezium's parts, and with them Debezium in the connector host
// and, with BENCH_PEER=connect, in a worker; a figure of the native
// connector pairs in the run's ratios with the worker's only — not with
// Debezium in the host, nor with the memory-limited native run.
func TestPGSystemsRatios(t *testing.T) {
	b := &bench{}
	if got := len(b.pgSystems(false)); got != 2 {
		t.Errorf("without Debezium: %d systems, want the two native ones", got)
	}
	if got := len(b.pgSystems(true)); got != 3 {
		t.Errorf("with Debezium, no peer: %d systems, want 3", got)
	}
	b.peer = sysConnect
	suts := b.pgSystems(true)
	if len(suts) != 4 {
		t.Fatalf("with Debezium and BENCH_PEER=connect: %d systems, want 4", len(suts))
	}
	const fig = "snapshot of 1k rows → topic"
	for i, sut := range suts {
		b.add("9 native postgres", sut.sys, fig+sut.suffix, "records/s", "higher", []float64{float64(1000 * (i + 1)), float64(2000 * (i + 1))}, "")
	}
	b.computeRatios()
	if len(b.rep.Ratios) != 1 {
		t.Fatalf("ratios %+v: want one, native over the worker", b.rep.Ratios)
	}
	r := b.rep.Ratios[0]
	if r.Figure != fig+" [Debezium, worker -Xmx1g]" || r.Ratio != 0.25 || r.Pairs != 2 {
		t.Errorf("ratio %+v: want native ÷ worker = 0.25 over 2 runs", r)
	}
}
