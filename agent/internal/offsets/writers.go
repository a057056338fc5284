package offsets

import (
	"sync"
	"time"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// A fresh transactional writer costs an offsets change about half of its
// time on the broker: a new client dials, loads metadata, finds the
// transaction coordinator and the offsets topic's leaders, and opens a
// produce connection before its first record goes out. writers keeps the
// writer of each transactional id's last change, so that the next change
// of the same connector writes through warm connections.
//
// Reusing a writer keeps the fence: its epoch was taken by the init of an
// earlier change, after that change's tasks had stopped, and fenced every
// producer of the id before it. Whoever took the id since (a task that ran
// in between, a zombie of it) holds a newer epoch, and the kept writer's
// next transaction fails as fenced — then the change is made again through
// a new writer, whose init fences that producer in turn. A transaction
// that commits through the kept writer therefore proves that nobody else
// wrote under the id since the kept writer's epoch was taken.

const (
	// maxKeptWriters bounds the writers kept: each holds a client and its
	// connections. A fleet-wide change of more connectors than this pays
	// the fresh writer for some of them, as every change did before.
	maxKeptWriters = 32
	// keptWriterIdle is how long a writer is kept unused. Its connections
	// close after the client's idle timeout anyway; past this the writer
	// is unlikely to be used again soon.
	keptWriterIdle = 5 * time.Minute
)

// writers is the executor's kept writers, by transactional id. A writer is
// taken out while it is in use, so that two changes never share one.
type writers struct {
	mu   sync.Mutex
	byID map[string]keptWriter
	now  func() time.Time
	// closed is set by close: a change still in flight then closes its
	// writer instead of keeping it.
	closed bool
}

// keptWriter is a writer and when it was last put back.
type keptWriter struct {
	w    *kafkautil.TxnWriter
	used time.Time
}

func newWriters() *writers {
	return &writers{byID: map[string]keptWriter{}, now: time.Now}
}

// take removes and returns the writer kept for txnID, or nil.
func (ws *writers) take(txnID string) *kafkautil.TxnWriter {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k, ok := ws.byID[txnID]
	if !ok {
		return nil
	}
	delete(ws.byID, txnID)
	if ws.now().Sub(k.used) > keptWriterIdle || !k.w.Usable() {
		go k.w.Close()
		return nil
	}
	return k.w
}

// put keeps w as txnID's writer, closing those idle too long and, past
// maxKeptWriters, the least recently used.
func (ws *writers) put(txnID string, w *kafkautil.TxnWriter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		go w.Close()
		return
	}
	now := ws.now()
	if old, ok := ws.byID[txnID]; ok {
		// A concurrent change of the same id (the coordinator's connector
		// lock makes them rare) made its own writer. Either may hold the
		// newer epoch; should the one kept hold the older, its next commit
		// fails as fenced and that change is made through a new writer.
		go old.w.Close()
	}
	ws.byID[txnID] = keptWriter{w: w, used: now}
	for id, k := range ws.byID {
		if now.Sub(k.used) > keptWriterIdle {
			delete(ws.byID, id)
			go k.w.Close()
		}
	}
	for len(ws.byID) > maxKeptWriters {
		oldest := ""
		for id, k := range ws.byID {
			if oldest == "" || k.used.Before(ws.byID[oldest].used) {
				oldest = id
			}
		}
		go ws.byID[oldest].w.Close()
		delete(ws.byID, oldest)
	}
}

// close closes every kept writer, and those put after it.
func (ws *writers) close() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	for id, k := range ws.byID {
		k.w.Close()
		delete(ws.byID, id)
	}
}
