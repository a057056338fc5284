package cdccompare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileName is the golden file of a topic (named as in the golden files):
// the topic without the golden prefix, plus ".jsonl" —
// "cdc.all_types.jsonl", "transaction.jsonl", "__debezium-heartbeat.jsonl".
func FileName(topic string) string {
	name := topic
	if rest, ok := strings.CutPrefix(topic, GoldenPrefix+"."); ok {
		name = rest
	} else if rest, ok := strings.CutSuffix(topic, "."+GoldenPrefix); ok {
		name = rest
	}
	return name + ".jsonl"
}

// WriteDir replaces the golden files in dir with records (normalized): one
// file per topic (FileName), one record per line in order. Golden files
// of topics records no longer has are removed.
func WriteDir(dir string, records []Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("golden files: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return fmt.Errorf("golden files in %s: %w", dir, err)
	}
	files := map[string]*bytes.Buffer{}
	for _, r := range records {
		name := FileName(r.Topic)
		if files[name] == nil {
			files[name] = &bytes.Buffer{}
		}
		line, err := r.MarshalLine()
		if err != nil {
			return err
		}
		files[name].Write(line)
		files[name].WriteByte('\n')
	}
	for _, path := range old {
		if files[filepath.Base(path)] == nil {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("stale golden file: %w", err)
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("golden file: %w", err)
		}
	}
	return nil
}

// ReadDir reads the golden files of dir (WriteDir's), topic files in name
// order. A directory with no golden file is an error: there is nothing to
// compare with.
func ReadDir(dir string) ([]Record, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("golden files in %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no golden files (*.jsonl) in %s", dir)
	}
	slices.Sort(paths)
	var out []Record
	for _, path := range paths {
		recs, err := readFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// readFile reads one golden file, a record a line.
func readFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("golden file: %w", err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r Record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if r.Topic == "" {
			return nil, fmt.Errorf("%s:%d: %w", path, n, errors.New("a record without a topic"))
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
