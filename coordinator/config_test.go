package coordinator

import (
	"strings"
	"testing"
)

// TestValidateAdvertisedAddress: the advertised address is where the other
// coordinators forward writes (http://<address>), so it must name a port; a
// bare IP, as a manifest that passes the pod IP alone gives, would send
// them to port 80.
func TestValidateAdvertisedAddress(t *testing.T) {
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"", true}, // the bound REST address
		{"10.1.2.3:8083", true},
		{"sluice-0.sluice:8083", true},
		{"[fd00::1]:8083", true},
		{"10.1.2.3", false},
		{"sluice-0.sluice", false},
		{"fd00::1", false},
		{"10.1.2.3:", false},
		{":8083", false},
	} {
		cfg := validConfig()
		cfg.AdvertisedAddr = tt.addr
		err := cfg.Validate()
		if tt.ok && err != nil {
			t.Errorf("advertised address %q: %v, want valid", tt.addr, err)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), "host:port")) {
			t.Errorf("advertised address %q: %v, want an error asking for host:port", tt.addr, err)
		}
	}
}
