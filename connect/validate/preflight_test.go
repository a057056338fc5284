package validate

import (
	"slices"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestPreflightGoConnectors runs Kafka Connect's exactly-once preflight
// checks on the built-in sources: the file source supports exactly-once
// with a file and defines no boundaries; the generator defines them only
// with transaction.records.
func TestPreflightGoConnectors(t *testing.T) {
	reg := plugins.Builtin()
	file := fileSourceProps()
	gen := map[string]string{"connector.class": "GeneratorSource", "name": "n", "topic": "t"}
	with := withKV
	tests := []struct {
		name  string
		props map[string]string
		eos   bool
		want  map[string][]string
	}{
		{"required, cluster without exactly-once", with(file, "exactly.once.support", "required"), false,
			map[string][]string{"exactly.once.support": {msgWorkerNoExactlyOnce}}},
		{"required, supported", with(file, "exactly.once.support", " REQUIRED "), true, map[string][]string{}},
		{"requested asks nothing", with(file, "exactly.once.support", "requested"), false, map[string][]string{}},
		{"connector boundaries the file source cannot define", with(file, "transaction.boundary", "connector"), true,
			map[string][]string{"transaction.boundary": {msgBoundariesUnsupported}}},
		{"generator without transaction.records", with(gen, "transaction.boundary", "Connector"), true,
			map[string][]string{"transaction.boundary": {msgBoundariesUnsupported}}},
		{"generator with transaction.records", with(gen, "transaction.boundary", "connector", "transaction.records", "10", "exactly.once.support", "required"), true,
			map[string][]string{}},
		{"an invalid value is not checked further", with(file, "transaction.boundary", "sometimes"), true,
			map[string][]string{"transaction.boundary": {"Invalid value sometimes for configuration transaction.boundary: String must be one of (case insensitive): INTERVAL, POLL, CONNECTOR"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos, _, err := Connector(reg, tt.props, WithExactlyOnce(tt.eos))
			if err != nil {
				t.Fatal(err)
			}
			wantErrors(t, infos, tt.want)
		})
	}
}

// TestPreflightRemoteAnswers turns a Java connector's answers, as its host
// gives them, into Kafka Connect's messages.
func TestPreflightRemoteAnswers(t *testing.T) {
	reg := plugins.Builtin()
	p := &connect.Plugin{Class: "com.example.Source", Kind: connect.KindSource, Version: "1.0"}
	props := map[string]string{"connector.class": p.Class, "name": "n", "exactly.once.support": "required", "transaction.boundary": "connector"}
	tests := []struct {
		name      string
		preflight *wire.SourcePreflight
		want      map[string][]string
	}{
		{"supported", &wire.SourcePreflight{ExactlyOnce: &wire.PreflightAnswer{Support: "SUPPORTED"}, TransactionBoundaries: &wire.PreflightAnswer{Support: "SUPPORTED"}},
			map[string][]string{}},
		{"null answers", &wire.SourcePreflight{ExactlyOnce: &wire.PreflightAnswer{}, TransactionBoundaries: &wire.PreflightAnswer{}},
			map[string][]string{"exactly.once.support": {msgExactlyOnceNotAnswered}, "transaction.boundary": {msgBoundariesNull}}},
		{"unsupported", &wire.SourcePreflight{ExactlyOnce: &wire.PreflightAnswer{Support: "UNSUPPORTED"}, TransactionBoundaries: &wire.PreflightAnswer{Support: "UNSUPPORTED"}},
			map[string][]string{"exactly.once.support": {msgExactlyOnceUnsupported}, "transaction.boundary": {msgBoundariesUnsupported}}},
		{"thrown", &wire.SourcePreflight{ExactlyOnce: &wire.PreflightAnswer{Threw: true, Message: " no database "}, TransactionBoundaries: &wire.PreflightAnswer{Threw: true}},
			map[string][]string{
				"exactly.once.support": {"An unexpected error occurred during validation: no database"},
				"transaction.boundary": {"An unexpected error occurred during validation; please see the worker logs for more details."}}},
		// No host was asked (none has the plugin): only the cluster is checked.
		{"not asked", nil, map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos := Remote(reg, p, props, nil, WithExactlyOnce(true), WithPreflight(tt.preflight))
			wantErrors(t, infos, tt.want)
		})
	}
}

func wantErrors(t *testing.T, infos api.ConfigInfos, want map[string][]string) {
	t.Helper()
	got := errorsOf(infos)
	if len(got) != len(want) {
		t.Fatalf("errors = %q, want %q", got, want)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: errors = %q, want %q", k, got[k], w)
		}
	}
}
