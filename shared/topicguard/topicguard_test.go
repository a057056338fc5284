package topicguard

import (
	"errors"
	"regexp"
	"slices"
	"testing"
)

func TestGuard(t *testing.T) {
	g := New(map[string]string{"sluice-configs": "Sluice's config topic", "": "ignored"})
	cases := []struct {
		topic string
		what  string
	}{
		{"sluice-configs", "Sluice's config topic"},
		{"__consumer_offsets", "Kafka's consumer offsets topic"},
		{"__transaction_state", "Kafka's transaction state topic"},
		{"__share_group_state", "Kafka's share group state topic"},
		{"__remote_log_metadata", "Kafka's remote log metadata topic"},
		// A list, not a prefix: Debezium's heartbeat topic stays usable.
		{"__debezium-heartbeat.inventory", ""},
		{"sluice-configs-copy", ""},
		{"", ""},
	}
	for _, c := range cases {
		err := g.Check(c.topic)
		if c.what == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", c.topic, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Topic != c.topic || e.What != c.what {
			t.Errorf("Check(%q) = %v, want reserved as %q", c.topic, err, c.what)
		}
	}
	if got := New(nil).Check("__consumer_offsets"); got == nil {
		t.Error("Kafka's internal topics must be reserved without any of Sluice's")
	}
	if got := (Guard{}).Check("__transaction_state"); got == nil {
		t.Error("the zero Guard must still reserve Kafka's internal topics")
	}
}

func TestMatchedByIsAWholeNameMatch(t *testing.T) {
	g := New(map[string]string{"sluice-configs": "c", "sluice-audit": "a"})
	cases := map[string][]string{
		"sluice-.*": {"sluice-audit", "sluice-configs"},
		"sluice":    nil, // Kafka Connect matches whole names
		// The broker's internal topics are never selected by a pattern.
		".*":               {"__remote_log_metadata", "sluice-audit", "sluice-configs"},
		"orders|__.*":      {"__remote_log_metadata"},
		"(?i)SLUICE-AUDIT": {"sluice-audit"},
	}
	for rx, want := range cases {
		got := g.MatchedBy(regexp.MustCompile(rx))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("MatchedBy(%q) = %v, want %v", rx, got, want)
		}
	}
}

func TestExcludePatterns(t *testing.T) {
	g := New(map[string]string{"a.b": "x"})
	for _, p := range g.ExcludePatterns() {
		rx := regexp.MustCompile(p)
		if p == `^a\.b$` && (rx.MatchString("aXb") || !rx.MatchString("a.b")) {
			t.Errorf("%s must match exactly a.b", p)
		}
	}
	if n := len(g.ExcludePatterns()); n != len(KafkaInternal())+1 {
		t.Errorf("%d patterns, want one per reserved topic", n)
	}
}

func TestErrorNamesTheTopicAndWhatItIs(t *testing.T) {
	err := New(map[string]string{"sluice-audit": "Sluice's audit topic"}).Check("sluice-audit")
	want := "topic 'sluice-audit' is reserved (Sluice's audit topic): no connector may produce to it or consume from it"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
