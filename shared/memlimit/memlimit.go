// Package memlimit gives the Go runtime a soft memory limit below the
// memory limit of the cgroup the process runs in — a container's
// (Kubernetes resources.limits.memory, docker --memory) or a systemd
// unit's (MemoryMax=) — unless GOMEMLIMIT says otherwise. Near the limit
// the garbage collector then runs more often instead of the kernel killing
// the process. The limit is read from the cgroup rather than handed in by
// the manifest (the Downward API's limits.memory) because the runtime
// needs headroom below it (Fraction) for what it does not account — the
// kernel's socket buffers and the page cache of files the tasks write are
// charged to the cgroup too — and the Downward API can only pass the limit
// itself; and because one mechanism then serves Kubernetes, docker and
// systemd alike.
//
//	GOMEMLIMIT set            ─► left to the runtime (it read it at start)
//	cgroup limit L found      ─► debug.SetMemoryLimit(L × Fraction)
//	no limit (or none found)  ─► no soft limit, as Go's default
package memlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction is the share of the cgroup's limit the Go runtime may use.
const Fraction = 0.9

// unlimitedV1 is where cgroup v1 starts saying "no limit": it reports the
// largest page-aligned int64 (9223372036854771712), and no host has half
// of that.
const unlimitedV1 = int64(1) << 62

// Limit returns the memory limit, in bytes, of the cgroup this process
// runs in, as fsys (the file system from its root: "proc/self/cgroup",
// "sys/fs/cgroup/…") shows it: the smallest limit set on its cgroup or an
// ancestor, cgroup v2's memory.max or v1's memory.limit_in_bytes. ok is
// false when no limit is set or the process runs in no cgroup fsys shows.
func Limit(fsys fs.FS) (limit int64, ok bool, err error) {
	data, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil // not Linux, or no /proc
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the process's cgroups: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controllers:path; v2's single line is 0::path.
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) != 3 {
			continue
		}
		switch {
		case fields[0] == "0" && fields[1] == "":
			limit, ok, err = smallest(fsys, "sys/fs/cgroup", fields[2], "memory.max")
		case hasController(fields[1], "memory"):
			limit, ok, err = smallest(fsys, "sys/fs/cgroup/memory", fields[2], "memory.limit_in_bytes")
		default:
			continue
		}
		if err != nil || ok {
			return limit, ok, err
		}
	}
	return 0, false, sc.Err()
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smallest is the smallest limit file sets in the cgroup dir (under mount)
// or an ancestor. A directory that is not there is passed over: in a
// container without a cgroup namespace, /proc names the host's path while
// the mount holds the container's own cgroup at its root.
func smallest(fsys fs.FS, mount, dir, file string) (limit int64, ok bool, err error) {
	dir = path.Clean("/" + dir)
	for {
		n, set, err := readLimit(fsys, path.Join(mount, dir, file))
		if err != nil {
			return 0, false, err
		}
		if set && (!ok || n < limit) {
			limit, ok = n, true
		}
		if dir == "/" {
			return limit, ok, nil
		}
		dir = path.Dir(dir)
	}
}

// readLimit reads one limit file: set is false for "max", v1's "no limit"
// and a file that is not there.
func readLimit(fsys fs.FS, name string) (n int64, set bool, err error) {
	data, err := fs.ReadFile(fsys, strings.TrimPrefix(name, "/"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", name, err)
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s holds %q, not a number of bytes", name, s)
	}
	return n, n > 0 && n < unlimitedV1, nil
}

// Result is what Set did.
type Result struct {
	// Cgroup is the cgroup's limit found (0: none).
	Cgroup int64
	// Set is the soft limit given to the runtime (0: none given).
	Set int64
	// FromEnv: GOMEMLIMIT is set, and wins.
	FromEnv bool
}

// String says what Set did, for the log.
func (r Result) String() string {
	switch {
	case r.FromEnv:
		return "GOMEMLIMIT is set: the runtime keeps it"
	case r.Set > 0:
		return fmt.Sprintf("GOMEMLIMIT %d bytes: %.0f%% of the cgroup's memory limit %d", r.Set, Fraction*100, r.Cgroup)
	}
	return "no cgroup memory limit: no GOMEMLIMIT"
}

// Set gives the runtime a soft memory limit of Fraction of the cgroup's
// limit (Limit of fsys), unless the environment (lookupEnv) sets
// GOMEMLIMIT, which the runtime read when the process started and which
// wins as it does for any Go program.
func Set(fsys fs.FS, lookupEnv func(string) (string, bool)) (Result, error) {
	if _, set := lookupEnv("GOMEMLIMIT"); set {
		return Result{FromEnv: true}, nil
	}
	limit, ok, err := Limit(fsys)
	if err != nil || !ok {
		return Result{}, err
	}
	soft := int64(math.Floor(float64(limit) * Fraction))
	debug.SetMemoryLimit(soft)
	return Result{Cgroup: limit, Set: soft}, nil
}
