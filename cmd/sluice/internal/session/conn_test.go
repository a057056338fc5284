package session

import "testing"

// A URL pasted with one of the REST API's paths is cut to its base, with a
// note; host:port gets a scheme; another path stays, as a proxy's prefix.
func TestBaseURL(t *testing.T) {
	for _, c := range []struct {
		raw       string
		tls       bool
		base      string
		withNote  bool
		wantError bool
	}{
		{raw: "127.0.0.1:8083", base: "http://127.0.0.1:8083"},
		{raw: "127.0.0.1:8083", tls: true, base: "https://127.0.0.1:8083"},
		{raw: "http://h:8083/", base: "http://h:8083"},
		{raw: "http://h:8083/connectors", base: "http://h:8083", withNote: true},
		{raw: "h:8083/connectors/orders-src/status/", base: "http://h:8083", withNote: true},
		{raw: "https://h/proxy/sluice/connectors", base: "https://h/proxy/sluice", withNote: true},
		{raw: "https://gw/sluice", base: "https://gw/sluice"},
		{raw: "http://h:8083/connector-plugins", base: "http://h:8083", withNote: true},
		{raw: "http://h/proxy", base: "http://h/proxy"},
		{raw: "ftp://h", wantError: true},
	} {
		base, note, err := BaseURL(c.raw, c.tls)
		switch {
		case c.wantError:
			if err == nil {
				t.Errorf("BaseURL(%q): no error", c.raw)
			}
		case err != nil || base != c.base || (note != "") != c.withNote:
			t.Errorf("BaseURL(%q) = %q, %q, %v; want %q (a note: %v)", c.raw, base, note, err, c.base, c.withNote)
		}
	}
	if _, note, _ := BaseURL("http://h:8083/connectors/x", false); note != "http://h:8083/connectors/x: using http://h:8083 (the REST API's base URL; /connectors/x… is one of its paths)" {
		t.Errorf("note: %q", note)
	}
}

// The four wordings of a missing connector, a task's and a plugin's are
// said in one form; any other message is kept.
func TestNotFound(t *testing.T) {
	for msg, want := range map[string]string{
		"Connector x not found":            "Connector x not found",
		"Unknown connector x":              "Connector x not found",
		"Unknown connector: x":             "Connector x not found",
		"Unknown task: orders-src-3":       "Task 3 of connector orders-src not found",
		"Unknown plugin FileStreamSorce.":  "Plugin FileStreamSorce not found",
		"Status for connector x not found": "Status for connector x not found",
		"Maintenance window w-1 not found": "Maintenance window w-1 not found",
		"HTTP 404 Not Found":               "HTTP 404 Not Found",
	} {
		if got := NotFound(404, msg); got != want {
			t.Errorf("NotFound(%q) = %q, want %q", msg, got, want)
		}
	}
	if got := NotFound(400, "Unknown connector x"); got != "Unknown connector x" {
		t.Errorf("a 400 changed: %q", got)
	}
	if name, ok := MissingConnector(&HTTPError{Status: 404, Message: "Connector a-b not found; did you mean a-c?"}); !ok || name != "a-b" {
		t.Errorf("MissingConnector: %q %v", name, ok)
	}
}
