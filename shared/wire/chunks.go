package wire

// Every NATS message must fit the server's max_payload (1 MiB by default).
// A request that does not — an assignment with a large config, an offsets
// change of many partitions, a heartbeat of many tasks — travels in chunks
// to its receiver's chunk endpoint, which puts the request together and
// hands it whole to the endpoint it names, so that the request keeps its
// meaning: an offsets change is still applied in one Kafka transaction, and
// nothing of it before its last chunk arrived.
//
//	sender ─chunk 0…n-1─► <receiver>.chunk ─ChunkReply each─► sender
//	sender ─chunk n (Last)─► put together ─► endpoint(Subject) ─its reply─► sender
//
// The chunk endpoints are SubjectAgentChunk and SubjectLeaderChunk.
// A chunk stream that stops arriving (its sender died, or moved the request
// to another receiver) is dropped after a while, unapplied.

// RequestChunk is one piece of a request too large for one NATS message.
type RequestChunk struct {
	// Stream names the request the chunk belongs to; the sender picks it
	// at random for each request it sends in chunks.
	Stream string `json:"stream"`
	// Subject is the endpoint the whole request is for; it must be one the
	// receiver serves.
	Subject string `json:"subject"`
	// Size is the whole request's length in bytes. Every chunk repeats it,
	// so that a receiver can refuse a request too large to hold before any
	// of it is held.
	Size int64 `json:"size"`
	// Seq numbers the chunks of a stream from 0, in the order they are
	// sent; Last marks the final one, which the endpoint's reply answers.
	Seq  int  `json:"seq"`
	Last bool `json:"last,omitempty"`
	// Data is the chunk's part of the request's JSON text.
	Data []byte `json:"data"`
}

// ChunkReply acknowledges a chunk other than the last; Received is how many
// bytes of the request the receiver holds.
type ChunkReply struct {
	Received int64 `json:"received"`
}
