package postgres

import (
	"sync"
)

// Progress is a snapshot's progress, table by table: how many of a table's
// chunks are read, and the rows emitted so far.
type Progress struct {
	mu     sync.Mutex
	order  []string
	tables map[string]*TableProgress
	rows   int64
}

// TableProgress is one table's part of a snapshot.
type TableProgress struct {
	Table      string `json:"table"`
	Chunks     int    `json:"chunks"`
	ChunksDone int    `json:"chunks_done"`
	Rows       int64  `json:"rows"`
}

func newProgress() *Progress { return &Progress{tables: map[string]*TableProgress{}} }

func (p *Progress) addTable(table string, chunks int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.tables[table]; !ok {
		p.order = append(p.order, table)
	}
	p.tables[table] = &TableProgress{Table: table, Chunks: chunks}
}

func (p *Progress) chunkDone(table string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tables[table]; t != nil {
		t.ChunksDone++
	}
}

func (p *Progress) row(table string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows++
	if t := p.tables[table]; t != nil {
		t.Rows++
	}
}

// Rows is how many rows the snapshot emitted so far.
func (p *Progress) Rows() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rows
}

// Tables is every table's progress, in the snapshot's order.
func (p *Progress) Tables() []TableProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]TableProgress, len(p.order))
	for i, t := range p.order {
		out[i] = *p.tables[t]
	}
	return out
}
