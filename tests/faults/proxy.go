package faults

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy between one client process and a server, through
// which a test cuts that client off the network without touching the
// server or the client's other connections:
//
//   - Cut is a partition: the proxy stops moving bytes in both directions
//     and holds new connections without dialing the server. Nothing is
//     closed and nothing is lost — what was sent waits in the sockets'
//     buffers, as unacknowledged TCP segments would — so each side sees
//     only silence, and notices it only by its own timeouts.
//   - Heal ends the partition: held bytes flow on, held connections dial.
//   - Reset closes every open connection with a TCP RST (the client sees
//     "connection reset by peer" and the server a closed connection, as
//     when a NAT or load balancer drops its state); new connections are
//     accepted at once.
type Proxy struct {
	ln     net.Listener
	target string
	// respond, when set, rewrites what the server sends (KafkaProxy).
	respond func(c *kafkaConn) frameFilter

	mu    sync.Mutex
	cut   bool
	gate  chan struct{} // closed while not cut
	conns map[*proxyConn]struct{}
	done  bool
}

// proxyConn is one client connection and its server connection.
type proxyConn struct {
	client, server net.Conn
}

// frameFilter rewrites one direction's byte stream; it returns false to
// end the connection.
type frameFilter func(src io.Reader, dst io.Writer, wait func()) error

// StartProxy listens on a free loopback port and forwards every connection
// to target. It stops at t's cleanup.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, gate: make(chan struct{}), conns: map[*proxyConn]struct{}{}}
	close(p.gate)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port, which the client is given instead of the
// server's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut starts a partition (see Proxy).
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		p.cut, p.gate = true, make(chan struct{})
	}
}

// Heal ends a partition.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		p.cut = false
		close(p.gate)
	}
}

// Reset closes every open connection with an RST on the client's side.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close sends RST
		}
		c.client.Close()
		if c.server != nil {
			if tc, ok := c.server.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			c.server.Close()
		}
	}
	return len(conns)
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	p.ln.Close()
	p.Heal()
	p.Reset()
}

// wait blocks while the proxy is cut.
func (p *Proxy) wait() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	<-g
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	pc := &proxyConn{client: client}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		client.Close()
		return
	}
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
		client.Close()
		if pc.server != nil {
			pc.server.Close()
		}
	}()
	p.wait() // a partition holds a new connection before it reaches the server
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	pc.server = server
	p.mu.Unlock()

	up, down := frameFilter(copyGated), frameFilter(copyGated)
	if p.respond != nil {
		kc := &kafkaConn{proxy: p, pending: map[int32]apiCall{}}
		up, down = kc.requests, p.respond(kc)
	}
	errc := make(chan error, 2)
	go func() { errc <- up(client, server, p.wait) }()
	go func() { errc <- down(server, client, p.wait) }()
	//lint:ignore S1005 errcheck asks that a received error be dropped explicitly
	_ = <-errc // either side ending ends both
}

// copyGated copies src to dst, waiting before each read while the proxy is
// cut.
func copyGated(src io.Reader, dst io.Writer, wait func()) error {
	buf := make([]byte, 32<<10)
	for {
		wait()
		n, err := src.Read(buf)
		if n > 0 {
			wait() // bytes read just before a cut wait for the heal
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
