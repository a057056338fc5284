package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCrossSiteWritesRefused: a write a page of another site could send
// without a preflight — which a browser would accompany with a client
// certificate or cached Basic credentials — is refused before the API sees
// it; same-origin writes, the console's, followers' forwards, clients that
// are not browsers and every read go through.
func TestCrossSiteWritesRefused(t *testing.T) {
	reached := 0
	h := Mount(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++; w.WriteHeader(http.StatusNoContent) }), Options{})
	for _, tt := range []struct {
		name    string
		method  string
		headers map[string]string
		refused bool
	}{
		{"a client that is no browser", "POST", nil, false},
		{"cross-site by Sec-Fetch-Site", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"same-site but another origin", "DELETE", map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{"another Origin", "POST", map[string]string{"Origin": "https://evil.example"}, true},
		{"an opaque Origin", "PUT", map[string]string{"Origin": "null"}, true},
		{"same origin", "POST", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://sluice.test"}, false},
		{"the console's", "POST", map[string]string{"Sec-Fetch-Site": "cross-site", "X-Sluice-Console": "1"}, false},
		{"a follower's forward", "POST", map[string]string{"Origin": "http://other-coordinator:8083", "X-Sluice-Forwarded": "1"}, false},
		{"a cross-site read", "GET", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := reached
			r := httptest.NewRequest(tt.method, "http://sluice.test/sluice/migrations", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if got := rec.Code == http.StatusForbidden && reached == before; got != tt.refused {
				t.Errorf("refused %v (status %d, reached the API %v), want refused %v: %s", got, rec.Code, reached > before, tt.refused, rec.Body)
			}
		})
	}
}
