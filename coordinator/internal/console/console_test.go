package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A page's path is the page even with a dot in it (rollout and window ids,
// connector names); only a file missing from the console's own
// directories is a 404.
func TestPagesWithDotsAreThePage(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := Mount(api, Options{})
	for _, tt := range []struct {
		path   string
		status int
		page   bool
	}{
		{"/ui/", 200, true},
		{"/ui/rollouts/20261206-235513.987-30923a8d", 200, true},
		{"/ui/maintenance/20261202-021500.123-1a2b3c4d", 200, true},
		{"/ui/connectors/orders.v2", 200, true},
		{"/ui/connectors/orders.v2/config", 200, true},
		{"/ui/js/main.js", 200, false},
		{"/ui/js/pages/nothing.js", 404, false},
		{"/ui/css/nothing.css", 404, false},
		{"/connectors", http.StatusTeapot, false},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		isPage := strings.Contains(rec.Body.String(), "<title>Sluice console</title>")
		if rec.Code != tt.status || isPage != tt.page {
			t.Errorf("GET %s: %d (the page: %v), want %d (the page: %v)", tt.path, rec.Code, isPage, tt.status, tt.page)
		}
	}
}
