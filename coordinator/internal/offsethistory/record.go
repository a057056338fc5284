package offsethistory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
)

// maxRecordBytes bounds the value of one record, uncompressed: below the
// broker's default max.message.bytes (1 MB) with room for the record's
// key and the batch around it, whatever compression makes of it. A topic
// with a lower max.message.bytes lowers it (Log.valueLimit).
const maxRecordBytes = 900_000

// IncompletePrefix starts the Error of an entry Pending returns without
// all its parts: a crash (or a failed write) between the parts of a Begin.
// The rest of the text names the parts read. Begin returns only once every
// part is written, so an incomplete entry's change was never made.
const IncompletePrefix = "incomplete"

// IsIncomplete reports whether e, an entry Pending returned, lacks parts:
// its Changes are those of the parts read, not all of the entry's.
func IsIncomplete(e api.OffsetsHistoryEntry) bool {
	return e.State == api.HistoryPending && strings.HasPrefix(e.Error, IncompletePrefix)
}

// record is the value of every record of the topic, as readers decode it:
// a pending part (State pending, Part 1…Parts, its share of the changes)
// or a marker (State applied or failed, no parts, no changes). Changes
// stays undecoded until an entry is returned.
type record struct {
	api.OffsetsHistoryEntry
	Part    int             `json:"part,omitempty"`
	Parts   int             `json:"parts,omitempty"`
	Changes json.RawMessage `json:"changes,omitempty"`
}

// encodeParts is the pending record values of e: its fields in each, and
// its changes split so that no value exceeds limit bytes. An entry
// without changes is one part with an empty list.
func encodeParts(e api.OffsetsHistoryEntry, limit int) ([][]byte, error) {
	head := e
	head.Changes = nil
	// The size of a part with no changes, numbered as high as any is.
	base, err := json.Marshal(record{OffsetsHistoryEntry: head, Part: 999_999, Parts: 999_999, Changes: json.RawMessage("[]")})
	if err != nil {
		return nil, fmt.Errorf("encode entry: %w", err)
	}
	budget := limit - len(base)
	if budget <= 2 {
		return nil, fmt.Errorf("the entry's fields take %d bytes, more than a record of the topic holds (%d)", len(base), limit)
	}
	groups := [][]byte{}
	var cur bytes.Buffer
	for i, c := range e.Changes {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode change %d: %w", i, err)
		}
		if len(raw)+2 > budget {
			return nil, fmt.Errorf("the change of partition %v takes %d bytes, more than a record of the topic holds beside the entry's fields (%d)", c.Partition, len(raw), budget-2)
		}
		if cur.Len() > 0 && cur.Len()+1+len(raw)+1 > budget {
			groups = append(groups, closeList(&cur))
		}
		if cur.Len() == 0 {
			cur.WriteByte('[')
		} else {
			cur.WriteByte(',')
		}
		cur.Write(raw)
	}
	if cur.Len() > 0 || len(groups) == 0 {
		groups = append(groups, closeList(&cur))
	}
	values := make([][]byte, len(groups))
	for i, g := range groups {
		if values[i], err = json.Marshal(record{OffsetsHistoryEntry: head, Part: i + 1, Parts: len(groups), Changes: g}); err != nil {
			return nil, fmt.Errorf("encode part %d: %w", i+1, err)
		}
	}
	return values, nil
}

// closeList ends the JSON list in b and returns it, leaving b empty.
func closeList(b *bytes.Buffer) []byte {
	if b.Len() == 0 {
		b.WriteByte('[')
	}
	b.WriteByte(']')
	out := slices.Clone(b.Bytes())
	b.Reset()
	return out
}

// decode reads a record of the topic; ok is false for one that is neither
// a part nor a marker (written by something else).
func decode(r *kgo.Record) (record, bool) {
	var rec record
	if err := json.Unmarshal(r.Value, &rec); err != nil || rec.ID == "" || rec.Connector == "" {
		return record{}, false
	}
	switch rec.State {
	case api.HistoryPending:
		return rec, rec.Part >= 1 && rec.Part <= rec.Parts
	case api.HistoryApplied, api.HistoryFailed:
		return rec, true
	}
	return record{}, false
}

// assembly is an entry being put together from its records.
type assembly struct {
	// head is the entry as its first part read has it, without changes.
	head  api.OffsetsHistoryEntry
	parts int
	// changes are the parts' raw change lists, by part number.
	changes map[int]json.RawMessage
}

// add takes part rec of the entry.
func (a *assembly) add(rec record) {
	if a.changes == nil {
		a.head, a.parts, a.changes = rec.OffsetsHistoryEntry, rec.Parts, map[int]json.RawMessage{}
		a.head.Changes = nil
	}
	a.changes[rec.Part] = rec.Changes
}

// settle applies marker m to the entry.
func (a *assembly) settle(m record) {
	a.head.State, a.head.Error = m.State, m.Error
}

// complete reports whether every part of the entry was read.
func (a *assembly) complete() bool { return a.parts > 0 && len(a.changes) == a.parts }

// entry is the entry with the changes of the parts read, in part order;
// an incomplete one says so in its Error (see IncompletePrefix).
func (a *assembly) entry() (api.OffsetsHistoryEntry, error) {
	e := a.head
	e.Changes = []api.OffsetChange{}
	var read []int
	for p := 1; p <= a.parts; p++ {
		raw, ok := a.changes[p]
		if !ok {
			continue
		}
		read = append(read, p)
		// Numbers keep their JSON text: an int64 position above 2^53, or a
		// sink offset of a million (1e+06 as a float), must come back as
		// it was written, to be written back by an undo or compared with
		// the connector's current positions.
		var cs []api.OffsetChange
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&cs); err != nil {
			return api.OffsetsHistoryEntry{}, fmt.Errorf("entry %s of connector %s: part %d: decode changes: %w", e.ID, e.Connector, p, err)
		}
		e.Changes = append(e.Changes, cs...)
	}
	if !a.complete() {
		e.Error = fmt.Sprintf("%s: read parts %v of %d", IncompletePrefix, read, a.parts)
	}
	return e, nil
}
