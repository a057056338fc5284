package kafkautil

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkasec"
)

// ErrUnreachable is wrapped by Probe's error when no broker could be
// reached at all (refused, unresolvable, timed out): unlike a rejected
// credential, that may pass by itself, and a caller may choose to go on.
var ErrUnreachable = errors.New("no broker reachable")

// DefaultProbeTimeout is how long StartupProbe waits for a broker to
// answer before it goes on without the check.
const DefaultProbeTimeout = 10 * time.Second

// probeBackoff is the pause between rounds over the seeds while none is
// reachable.
const probeBackoff = 500 * time.Millisecond

// StartupProbe is the check every Sluice process makes at start-up: Probe
// with timeout (zero: DefaultProbeTimeout). A rejected password or
// certificate is an error naming the broker. Brokers that cannot be reached
// yet are only warned about on log, as before the check existed: the
// clients keep trying them, and a process may start before its broker.
func StartupProbe(ctx context.Context, log *slog.Logger, brokers string, sec *kafkasec.Config, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	err := Probe(ctx, brokers, sec, timeout)
	if errors.Is(err, ErrUnreachable) {
		log.Warn("Kafka not reachable yet; going on", "err", err)
		return nil
	}
	return err
}

// Probe connects to the brokers once with sec's settings and asks for
// metadata, so that a wrong password or an untrusted certificate stops
// start-up with a message naming the broker and the reason, instead of
// every client retrying it forever in the background. It returns nil as
// soon as one seed answers. A broker that refuses the connection's security
// (TLS or SASL) is an error at once; seeds that cannot be reached are tried
// again until timeout, and then the error wraps ErrUnreachable.
func Probe(ctx context.Context, brokers string, sec *kafkasec.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seeds := Seeds(brokers)
	var last error
	for {
		for _, seed := range seeds {
			err := pingSeed(ctx, seed, sec)
			if err == nil {
				return nil
			}
			if reachedBroker(err) {
				return Explain(seed, sec, err)
			}
			last = fmt.Errorf("kafka %s: %w", seed, err)
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return fmt.Errorf("%w within %v: %w", ErrUnreachable, timeout, last)
		case <-time.After(probeBackoff):
		}
	}
}

// pingSeed asks one seed for metadata with a client of its own, so that an
// error is known to be that broker's.
func pingSeed(ctx context.Context, seed string, sec *kafkasec.Config) error {
	cl, err := kgo.NewClient(ClientOpts(seed, "sluice-probe", sec)...)
	if err != nil {
		return fmt.Errorf("client options: %w", err)
	}
	defer cl.Close()
	return cl.Ping(ctx)
}

// reachedBroker reports whether err came from a broker that was reached
// (it answered, or refused the handshake or authentication), as opposed to
// one that could not be dialled or did not answer in time.
func reachedBroker(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return true
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return true
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return false
	}
	_, dns := errors.AsType[*net.DNSError](err)
	return !dns
}

// Explain turns the error of a request to broker into a message that says
// what is wrong in the user's terms: authentication, certificate
// verification, a TLS/plaintext mix-up. Unrecognised errors are returned
// wrapped with the broker's address.
func Explain(broker string, sec *kafkasec.Config, err error) error {
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return fmt.Errorf("kafka %s: SASL authentication failed: %w", broker, err)
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Errorf("kafka %s: SASL mechanism not enabled on this listener: %w", broker, err)
	case errors.Is(err, kerr.IllegalSaslState):
		return fmt.Errorf("kafka %s: SASL: %w", broker, err)
	}
	if cve, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return fmt.Errorf("kafka %s: TLS handshake: %w", broker, certReason(cve))
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return fmt.Errorf("kafka %s: TLS handshake: the broker did not answer in TLS; is it a plaintext listener? (%w)", broker, err)
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "remote error" {
		return fmt.Errorf("kafka %s: TLS handshake: the broker refused the connection (does it require a client certificate, %s and %s?): %w",
			broker, kafkasec.FlagTLSCert, kafkasec.FlagTLSKey, err)
	}
	if _, ok := errors.AsType[*kgo.ErrFirstReadEOF](err); ok {
		hint := "a TLS listener needs " + kafkasec.FlagTLS + ", a SASL one " + kafkasec.FlagSASLMechanism
		if sec.TLSOn() {
			hint = "is it a plaintext listener? TLS is on (" + kafkasec.FlagTLS + " or a --kafka-tls-* flag)"
		}
		return fmt.Errorf("kafka %s: the broker closed the connection (%s): %w", broker, hint, err)
	}
	// A broker that ends the connection during authentication (kfake
	// does, on a wrong password) shows only as EOF.
	if errors.Is(err, io.EOF) && sec.SASLOn() {
		return fmt.Errorf("kafka %s: the broker closed the connection (wrong SASL credentials, or a mechanism the listener does not take?): %w", broker, err)
	}
	return fmt.Errorf("kafka %s: %w", broker, err)
}

// certReason is the x509 reason of a failed verification (unknown
// authority, wrong host name, expired), without the TLS wrapping.
func certReason(cve *tls.CertificateVerificationError) error {
	if cve.Err != nil {
		return cve.Err
	}
	return cve
}
