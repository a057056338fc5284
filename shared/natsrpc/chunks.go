package natsrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// A request larger than the NATS server's max_payload travels in chunks
// (wire.RequestChunk) to the receiver's chunk endpoint, an Assembler, which
// puts it together and runs the endpoint it names on the whole request:
//
//	Call ─► too large? ─► chunk 0 … chunk n-1 (each acknowledged) ─► chunk n (Last)
//	Assembler: hold (bounded) ─► … ─► whole ─► endpoint ─► its reply answers chunk n
//
// The endpoint sees exactly the request a single message would have
// carried, so what it does with it — one Kafka transaction, a term check —
// is unchanged, and nothing of it happens before the last chunk arrived.

// Defaults of an Assembler.
const (
	// DefaultMaxAssembled bounds the bytes an Assembler holds at once, over
	// every request it is putting together.
	DefaultMaxAssembled = 64 << 20
	// DefaultChunkIdle is how long a request being put together waits for
	// its next chunk before it is dropped: its sender died, or gave up.
	DefaultChunkIdle = 30 * time.Second
)

// chunkRoom is what a chunk's fields other than its data take in its JSON
// text, besides the subject (counted apiece).
const chunkRoom = 256

// AssemblerOptions bound an Assembler.
type AssemblerOptions struct {
	// MaxBytes bounds the bytes held at once (default DefaultMaxAssembled).
	MaxBytes int64
	// Idle is how long a request waits for its next chunk (default
	// DefaultChunkIdle).
	Idle time.Duration
}

// Assembler serves a chunk endpoint for the endpoints mounted through it:
// each of them answers whole requests on its own subject, as Mount does,
// and requests too large for one message put together from chunks.
type Assembler struct {
	maxBytes int64
	idle     time.Duration

	mu        sync.Mutex
	endpoints map[string]mounted
	streams   map[string]*stream
	held      int64
}

type mounted struct {
	name       string
	subject    string
	ep         endpoint.Endpoint
	newRequest func() any
}

// stream is one request being put together.
type stream struct {
	subject string
	size    int64
	next    int
	data    []byte
	timer   *time.Timer
}

// NewAssembler returns an Assembler bounded by opts.
func NewAssembler(opts AssemblerOptions) *Assembler {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxAssembled
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultChunkIdle
	}
	return &Assembler{maxBytes: opts.MaxBytes, idle: opts.Idle, endpoints: map[string]mounted{}, streams: map[string]*stream{}}
}

// Mount adds ep to svc as Mount does, with opts, and lets the Assembler's
// chunk endpoint hand it requests put together from chunks (each of which
// runs as it is complete, whatever opts say).
func (a *Assembler) Mount(svc micro.Service, name, subject string, ep endpoint.Endpoint, newRequest func() any, opts ...MountOption) error {
	if err := Mount(svc, name, subject, ep, newRequest, opts...); err != nil {
		return err
	}
	a.mu.Lock()
	a.endpoints[subject] = mounted{name: name, subject: subject, ep: ep, newRequest: newRequest}
	a.mu.Unlock()
	return nil
}

// Serve mounts the chunk endpoint on subject. Subjects may have '*'
// wildcard tokens; the tokens a chunk's own subject has at the chunk
// endpoint's wildcards must be, in order, those the request's subject has
// at its endpoint's wildcards. So whoever may publish chunks only on
// ….chunk.<agent> can only have a request for ….<endpoint>.<agent> put
// together: NATS permissions on the chunk subject bind the request's.
func (a *Assembler) Serve(svc micro.Service, name, subject string) error {
	h := micro.HandlerFunc(func(req micro.Request) { a.chunk(subject, req) })
	if err := svc.AddEndpoint(name, h, micro.WithEndpointSubject(subject)); err != nil {
		return fmt.Errorf("mount %s on %s: %w", name, subject, err)
	}
	return nil
}

// chunk takes one chunk. The last one's request runs in a goroutine of its
// own, so that a long operation does not hold up the chunks of others.
func (a *Assembler) chunk(pattern string, req micro.Request) {
	var c wire.RequestChunk
	if err := json.Unmarshal(req.Data(), &c); err != nil {
		respondError(req, api.Errorf(api.CodeBadRequest, "decode chunk: %v", err))
		return
	}
	if err := c.Validate(); err != nil {
		respondError(req, api.AsError(err))
		return
	}
	bound, _ := wildcards(pattern, req.Subject())
	m, data, received, err := a.add(req.Subject(), bound, c)
	if err != nil {
		respondError(req, err)
		return
	}
	if data == nil {
		_ = req.RespondJSON(wire.ChunkReply{Received: received})
		return
	}
	go func() {
		defer a.release(int64(len(data)))
		ctx, cancel := requestContext(req.Headers())
		defer cancel()
		ctx = withReceived(ctx, Received{Subject: c.Subject, Data: data, Headers: req.Headers()})
		serve(ctx, req, m.name, data, m.ep, m.newRequest)
	}()
}

// add appends c, which came on subject and whose subject's wildcard tokens
// must be bound, to its stream and returns how many bytes the stream holds.
// It returns the whole request, and the endpoint it is for, once c was the
// last chunk; its bytes stay counted as held until release.
func (a *Assembler) add(subject string, bound []string, c wire.RequestChunk) (m mounted, whole []byte, received int64, err *api.Error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.endpointFor(c.Subject, bound)
	// Streams are told apart per chunk subject, so that one sender cannot
	// end another's stream by reusing its id.
	key := subject + " " + c.Stream
	switch {
	case !ok:
		return m, nil, 0, api.Errorf(api.CodeNotFound, "chunk: no endpoint on %s takes chunked requests here", c.Subject)
	case c.Size <= 0 || c.Size > a.maxBytes:
		return m, nil, 0, api.Errorf(api.CodeTooLarge, "chunked request of %d bytes on %s: this receiver puts together requests of at most %d bytes", c.Size, c.Subject, a.maxBytes)
	}
	s := a.streams[key]
	if s == nil {
		if c.Seq != 0 {
			return m, nil, 0, api.Errorf(api.CodeBadRequest, "chunk %d of stream %s: its earlier chunks are not held (dropped after %v without a chunk, or never sent)", c.Seq, c.Stream, a.idle)
		}
		if a.held+c.Size > a.maxBytes {
			return m, nil, 0, api.Errorf(api.CodeUnavailable, "chunked request of %d bytes on %s: this receiver already holds %d of its %d bytes for other requests; retry", c.Size, c.Subject, a.held, a.maxBytes)
		}
		s = &stream{subject: c.Subject, size: c.Size, data: make([]byte, 0, c.Size)}
		id := key
		s.timer = time.AfterFunc(a.idle, func() { a.drop(id, s) })
		a.streams[id] = s
		a.held += c.Size
	}
	if c.Seq != s.next || c.Subject != s.subject || c.Size != s.size || int64(len(s.data)+len(c.Data)) > s.size {
		a.dropLocked(key, s)
		return m, nil, 0, api.Errorf(api.CodeBadRequest, "chunk %d of stream %s does not continue it (want chunk %d of %d bytes for %s); the request is dropped", c.Seq, c.Stream, s.next, s.size, s.subject)
	}
	s.data = append(s.data, c.Data...)
	s.next++
	s.timer.Reset(a.idle)
	if !c.Last {
		return m, nil, int64(len(s.data)), nil
	}
	s.timer.Stop()
	delete(a.streams, key)
	if int64(len(s.data)) != s.size {
		a.held -= s.size
		return m, nil, 0, api.Errorf(api.CodeBadRequest, "chunked request on %s ended at %d of its %d bytes", s.subject, len(s.data), s.size)
	}
	return m, s.data, s.size, nil
}

// endpointFor finds the endpoint mounted for subject whose wildcard tokens
// there are bound. a.mu is held.
func (a *Assembler) endpointFor(subject string, bound []string) (mounted, bool) {
	if m, ok := a.endpoints[subject]; ok && len(bound) == 0 {
		return m, true
	}
	for _, m := range a.endpoints {
		if got, ok := wildcards(m.subject, subject); ok && slices.Equal(got, bound) {
			return m, true
		}
	}
	return mounted{}, false
}

// wildcards matches subject against pattern, whose tokens may be '*', and
// returns the tokens of subject at pattern's wildcards.
func wildcards(pattern, subject string) ([]string, bool) {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	if len(p) != len(s) {
		return nil, false
	}
	var out []string
	for i := range p {
		switch {
		case p[i] == "*":
			out = append(out, s[i])
		case p[i] != s[i]:
			return nil, false
		}
	}
	return out, true
}

func (a *Assembler) drop(id string, s *stream) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropLocked(id, s)
}

// dropLocked forgets stream id if it is still s. a.mu is held.
func (a *Assembler) dropLocked(id string, s *stream) {
	if a.streams[id] != s {
		return
	}
	s.timer.Stop()
	delete(a.streams, id)
	a.held -= s.size
}

func (a *Assembler) release(n int64) {
	a.mu.Lock()
	a.held -= n
	a.mu.Unlock()
}

// sendChunks sends data, a request for subject, in chunks that each fit
// limit, to the chunk endpoint o names, and returns the reply to the last.
func sendChunks(ctx context.Context, nc *nats.Conn, o callOptions, hdr nats.Header, subject string, data []byte, limit int64) (*nats.Msg, error) {
	// Data travels base64-encoded in the chunk's JSON: 4 bytes per 3.
	per := (limit - headerRoom - chunkRoom - int64(len(subject))) / 4 * 3
	if per <= 0 {
		return nil, api.Errorf(api.CodeTooLarge, "request of %d bytes on %s exceeds the NATS server's max_payload of %d bytes, too small to send it in chunks", len(data), subject, limit)
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	c := wire.RequestChunk{Stream: hex.EncodeToString(id), Subject: subject, Size: int64(len(data))}
	for off := int64(0); ; c.Seq++ {
		end := min(off+per, int64(len(data)))
		c.Data, c.Last = data[off:end], end == int64(len(data))
		msg, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode chunk %d of a request on %s: %w", c.Seq, subject, err)
		}
		reply, err := request(ctx, nc, o, hdr, o.chunk, msg)
		if err != nil || c.Last {
			return reply, err
		}
		off = end
	}
}
