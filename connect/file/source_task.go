package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// idleWait is how long Poll waits for more data at the end of the file, or
// for a missing file to appear, before returning nothing. Kafka waits a
// second; Sluice keeps Poll prompt so pause and stop stay quick.
const idleWait = 200 * time.Millisecond

// readChunk is how much the task reads from the file at a time.
const readChunk = 64 << 10

// maxPollBytes and maxLineBytes bound what a task holds: a poll returns
// once its lines reach 4 MiB (whatever batch.size allows), and a line that
// grows past 8 MiB without ending fails the task rather than being read
// into memory until the file ends. (Kafka's producer refuses a record of
// about 1 MB anyway.)
const (
	maxPollBytes = 4 << 20
	maxLineBytes = 8 << 20
)

// SourceTask reads complete lines from a file. Its position is the byte
// offset just after the last line it emitted.
//
//	Start: read committed position ──► Poll: open (wait while missing), seek
//	         ──► read ──► split lines ──► records (≤ batch.size) ──► Poll …
type SourceTask struct {
	filename  string // as configured: the partition key
	path      string // resolved against the working directory
	workDir   string
	allowed   *allowedpaths.Paths
	topic     string
	batchSize int

	file     *os.File
	pending  []byte // read but not yet emitted: at most a partial line
	position int64  // file offset of pending[0]
	warned   bool
}

var _ connect.SourceTask = (*SourceTask)(nil)

// Start implements connect.SourceTask: it resolves the path and reads the
// committed position, so that Poll resumes after the last committed line.
func (t *SourceTask) Start(ctx context.Context, tc connect.SourceTaskContext, props map[string]string) error {
	v, err := SourceConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.filename = v.String(FileConfig)
	t.topic = v.String(TopicConfig)
	t.batchSize = max(v.Int(BatchSizeConfig), 1)
	t.allowed, t.workDir = tc.AllowedPaths, tc.WorkDir
	if t.path, err = t.checkPath(); err != nil {
		return err
	}
	if tc.Offsets == nil {
		return nil
	}
	off, err := tc.Offsets.Offset(ctx, t.partition())
	if err != nil {
		return err
	}
	if raw, ok := off[PositionField]; ok && raw != nil {
		pos, ok := AsLong(raw)
		if !ok || pos < 0 {
			return errors.New("Offset position is the incorrect type")
		}
		t.position = pos
	}
	return nil
}

// checkPath resolves the file's path within the allowed paths. Poll checks
// again before it opens the file, since a file missing at Start may appear
// later as a link that leads elsewhere.
func (t *SourceTask) checkPath() (string, error) {
	path, err := t.allowed.Check(t.filename, t.workDir)
	if err != nil {
		return "", fmt.Errorf("FileStreamSourceTask may not read '%s': %w", t.filename, err)
	}
	return path, nil
}

func (t *SourceTask) partition() map[string]any {
	return map[string]any{FilenameField: t.filename}
}

// Poll implements connect.SourceTask.
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if t.file == nil {
		path, err := t.checkPath()
		if err != nil {
			return nil, err
		}
		t.path = path
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			if !t.warned {
				// Kafka logs this on every poll; once per absence is enough.
				slog.Warn("Couldn't find file for FileStreamSourceTask, sleeping to wait for it to be created", "file", t.path)
				t.warned = true
			}
			return nil, wait(ctx)
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Seek(t.position, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		t.file, t.warned = f, false
	}
	var records []connect.SourceRecord
	size := 0
	buf := make([]byte, readChunk)
	for {
		records = t.extract(records, &size)
		if len(records) >= t.batchSize || size >= maxPollBytes {
			return records, nil
		}
		if len(t.pending) > maxLineBytes {
			return records, fmt.Errorf("the line at byte %d of %s is longer than %d bytes: the file source reads lines of at most that", t.position, t.filename, maxLineBytes)
		}
		n, err := t.file.Read(buf)
		if n > 0 {
			t.pending = append(t.pending, buf[:n]...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return records, err
		}
		if len(records) > 0 {
			return records, nil
		}
		return nil, wait(ctx)
	}
}

// extract appends a record for each complete line in pending, up to the
// batch size and until the lines' bytes, counted in size, reach
// maxPollBytes. Lines end in \n, \r\n or \r; a \r at the end of pending
// waits for the next byte, as it may start a \r\n. A partial last line
// stays in pending until its terminator arrives.
func (t *SourceTask) extract(records []connect.SourceRecord, size *int) []connect.SourceRecord {
	for len(records) < t.batchSize && *size < maxPollBytes {
		i := bytes.IndexAny(t.pending, "\r\n")
		if i < 0 {
			return records
		}
		next := i + 1
		if t.pending[i] == '\r' {
			if i+1 >= len(t.pending) {
				return records
			}
			if t.pending[i+1] == '\n' {
				next = i + 2
			}
		}
		// Java's reader replaces malformed UTF-8 with U+FFFD.
		line := strings.ToValidUTF8(string(t.pending[:i]), "\uFFFD")
		t.pending = t.pending[next:]
		t.position += int64(next)
		*size += next
		records = append(records, connect.SourceRecord{
			SourcePartition: t.partition(),
			SourceOffset:    map[string]any{PositionField: t.position},
			Topic:           t.topic,
			ValueSchema:     connect.StringSchema,
			Value:           line,
			Timestamp:       time.Now(),
		})
	}
	return records
}

// wait sleeps for idleWait or until ctx ends; ctx's end is not an error,
// since Poll returning nothing is how a task yields.
func wait(ctx context.Context) error {
	timer := time.NewTimer(idleWait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return nil
}

// Stop implements connect.SourceTask.
func (t *SourceTask) Stop() error {
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	t.file = nil
	return err
}
