package kafkautil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClientID(t *testing.T) {
	if got := ClientID("sluice-agent", "a1", "producer", "src", "0"); got != "sluice-agent-a1-producer-src-0" {
		t.Fatalf("short id changed: %q", got)
	}
	long := strings.Repeat("n", 16000)
	ids := map[string]bool{}
	for _, parts := range [][]string{
		{"sluice-agent", "a1", "producer", long, "0"},
		{"sluice-agent", "a1", "producer", long, "1"},
		{"sluice-agent", "a1", "producer", long + "x", "0"},
		{"sluice-agent", "a1", "txn", long, "0"},
		{"sluice-agent", long},                                            // a long last part
		{"sluice-agent", "a1", "producer", strings.Repeat("é", 300), "7"}, // multi-byte runes at the cut
	} {
		id := ClientID(parts...)
		if len(id) > MaxClientIDBytes || !utf8.ValidString(id) || !strings.HasPrefix(id, "sluice-agent-") {
			t.Errorf("ClientID(%.40q…) = %.60q… (%d bytes)", parts, id, len(id))
		}
		if last := parts[len(parts)-1]; len(last) <= 16 && !strings.HasSuffix(id, "-"+last) {
			t.Errorf("ClientID lost the last part %q: %.60q…", last, id)
		}
		if ids[id] {
			t.Errorf("ClientID(%.40q…) collides", parts)
		}
		ids[id] = true
	}
}
