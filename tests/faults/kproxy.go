package faults

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// StartKafkaProxy is a Proxy between one Kafka client process and a
// single-broker cluster at broker that keeps every connection of that
// client going through it. A Kafka client only bootstraps at the address it
// is given; then it connects to the addresses the broker advertises in its
// Metadata, FindCoordinator and DescribeCluster answers. The proxy speaks
// enough of the protocol to rewrite those addresses to its own (it reads
// every request's header for the API key and version of the answer, and
// decodes and re-encodes only those three answers with kmsg), so no broker
// configuration changes and the other processes keep their direct path:
// cutting this proxy cuts one process off Kafka alone.
//
// Plaintext only: it reads the protocol, so a TLS listener cannot be
// proxied so.
func StartKafkaProxy(t testing.TB, broker string) *Proxy {
	t.Helper()
	p := StartProxy(t, broker)
	host, portStr, err := net.SplitHostPort(p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	p.respond = func(kc *kafkaConn) frameFilter {
		kc.host, kc.port = host, int32(port)
		return kc.responses
	}
	return p
}

// apiCall is what a response needs to be decoded: its request's API key
// and version.
type apiCall struct {
	key, version int16
}

// kafkaConn is the protocol state of one proxied connection.
type kafkaConn struct {
	proxy   *Proxy
	host    string
	port    int32
	mu      sync.Mutex
	pending map[int32]apiCall // by correlation id
}

// readFrame reads one size-prefixed protocol frame, size included.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 256<<20 {
		return nil, fmt.Errorf("kafka proxy: frame of %d bytes", n)
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	_, err := io.ReadFull(r, frame[4:])
	return frame, err
}

// requests forwards the client's requests, noting each one's key and
// version under its correlation id.
func (kc *kafkaConn) requests(src io.Reader, dst io.Writer, wait func()) error {
	for {
		wait()
		frame, err := readFrame(src)
		if err != nil {
			return eofNil(err)
		}
		if len(frame) >= 12 {
			key := int16(binary.BigEndian.Uint16(frame[4:]))
			version := int16(binary.BigEndian.Uint16(frame[6:]))
			corr := int32(binary.BigEndian.Uint32(frame[8:]))
			kc.mu.Lock()
			kc.pending[corr] = apiCall{key, version}
			kc.mu.Unlock()
		}
		wait()
		if _, err := dst.Write(frame); err != nil {
			return err
		}
	}
}

// responses forwards the broker's answers, rewriting the broker addresses
// of Metadata, FindCoordinator and DescribeCluster answers.
func (kc *kafkaConn) responses(src io.Reader, dst io.Writer, wait func()) error {
	for {
		wait()
		frame, err := readFrame(src)
		if err != nil {
			return eofNil(err)
		}
		if len(frame) >= 8 {
			corr := int32(binary.BigEndian.Uint32(frame[4:]))
			kc.mu.Lock()
			call, ok := kc.pending[corr]
			delete(kc.pending, corr)
			kc.mu.Unlock()
			if ok {
				if frame, err = kc.rewrite(call, frame); err != nil {
					return err
				}
			}
		}
		wait()
		if _, err := dst.Write(frame); err != nil {
			return err
		}
	}
}

// rewrite returns frame with the broker addresses it holds replaced by the
// proxy's; frames of other APIs are returned as they are.
func (kc *kafkaConn) rewrite(call apiCall, frame []byte) ([]byte, error) {
	var resp kmsg.Response
	switch call.key {
	case kmsg.Metadata.Int16(), kmsg.FindCoordinator.Int16(), kmsg.DescribeCluster.Int16():
		resp = kmsg.ResponseForKey(call.key)
	default:
		return frame, nil
	}
	resp.SetVersion(call.version)
	body := frame[8:] // after the size and the correlation id
	flexible := resp.IsFlexible()
	if flexible {
		// The response header's tagged fields: brokers send none; skip
		// whatever is there.
		n, used := binary.Uvarint(body)
		if used <= 0 {
			return nil, errors.New("kafka proxy: bad response header")
		}
		body = body[used:]
		for range n {
			_, u1 := binary.Uvarint(body)
			if u1 <= 0 {
				return nil, errors.New("kafka proxy: bad tagged field")
			}
			l, u2 := binary.Uvarint(body[u1:])
			if u2 <= 0 || uint64(len(body)) < uint64(u1+u2)+l {
				return nil, errors.New("kafka proxy: bad tagged field")
			}
			body = body[uint64(u1+u2)+l:]
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("kafka proxy: decode %s v%d: %w", kmsg.NameForKey(call.key), call.version, err)
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = kc.host, kc.port
		}
	case *kmsg.FindCoordinatorResponse:
		if r.Host != "" {
			r.Host, r.Port = kc.host, kc.port
		}
		for i := range r.Coordinators {
			if r.Coordinators[i].Host != "" {
				r.Coordinators[i].Host, r.Coordinators[i].Port = kc.host, kc.port
			}
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = kc.host, kc.port
		}
	}
	out := make([]byte, 8, len(frame)+32)
	copy(out[4:8], frame[4:8])
	if flexible {
		out = append(out, 0) // no tagged fields
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, nil
}

func eofNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
