package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sluice audit sends its flags as GET /sluice/audit's parameters and
// prints the records as a table.
func TestAuditCommand(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"records":[{"time":"2026-01-02T03:04:05Z","principal":"anonymous","source":"10.1.2.3:4567",` +
			`"operation":"connector.create","method":"POST","path":"/connectors","connector":"c","before":null,` +
			`"after":null,"status":400,"error":"Connector configuration is invalid\nand contains 1 error"}],"more":true,"unwritten":2}`))
	}))
	defer srv.Close()
	var out bytes.Buffer
	app := newApp()
	app.Writer = &out
	if err := app.Run([]string{"sluice", "audit", "--url", srv.URL, "--connector", "c", "--since", "1h", "--limit", "5"}); err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/sluice/audit" || got.URL.Query().Encode() != "connector=c&limit=5&since=1h" {
		t.Fatalf("requested %s", got.URL)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Local().Format(time.DateTime)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") ||
		strings.Join(strings.Fields(lines[1]), " ") != when+" anonymous 10.1.2.3:4567 connector.create c 400 Connector configuration is invalid and contains 1 error -" ||
		!strings.Contains(lines[2], "older records match") || !strings.Contains(lines[3], "could not write 2 audit record(s)") {
		t.Fatalf("printed:\n%s", out.String())
	}
	out.Reset()
	if err := app.Run([]string{"sluice", "audit", "--url", srv.URL, "--json"}); err != nil {
		t.Fatal(err)
	}
	if got.URL.RawQuery != "" || !strings.Contains(out.String(), `"operation": "connector.create"`) {
		t.Fatalf("requested %s, printed %s", got.URL, out.String())
	}
	if err := app.Run([]string{"sluice", "audit", "--url", srv.URL, "--principal", "ada", "--operation", "offsets.*", "--until", "2h", "--json"}); err != nil {
		t.Fatal(err)
	}
	if got.URL.Query().Encode() != "operation=offsets.%2A&principal=ada&until=2h" {
		t.Fatalf("requested %s", got.URL)
	}
}
