package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// A port nobody listens on is a ConnectError whose message says so and
// how to start Sluice; a refused request is "<status>: <message>".
func TestErr(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := api.NewClient(api.Config{Address: addr, Retry: &api.NoRetry})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Connectors().List(context.Background())
	err = Err(err)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want a *ConnectError", err, err)
	}
	if want := "cannot reach Sluice at http://" + addr + ": connection refused — is it running? (sluice dev / make run)"; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if !strings.Contains((&ConnectError{URL: "http://x", Err: &net.DNSError{Err: "no such host", Name: "x"}}).Error(), "no such host") {
		t.Fatal("DNS failure not named")
	}
	refused := Err(fmt.Errorf("wrapped: %w", &api.Error{Code: 404, Message: "Connector x not found"}))
	if refused.Error() != "404: Connector x not found" || !IsStatus(refused, 404) {
		t.Fatalf("refused: %v", refused)
	}
	// Already in the CLI's words: kept with its context.
	if got := Err(fmt.Errorf("read the offsets of x: %w", refused)); got.Error() != "read the offsets of x: 404: Connector x not found" {
		t.Fatalf("wrapped twice: %v", got)
	}
}
