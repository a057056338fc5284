package memlimit

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestLimit is the table of the cgroup layouts a process meets.
func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fs    fstest.MapFS
		limit int64
		ok    bool
		err   string
	}{
		{"no /proc (not Linux)", fstest.MapFS{}, 0, false, ""},
		{"v2 in a container (cgroup namespace): its own limit", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("536870912\n"),
		}, 512 << 20, true, ""},
		{"v2 without a limit", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, 0, false, ""},
		{"v2 systemd unit: MemoryMax= on the service, a smaller one on its slice", fstest.MapFS{
			"proc/self/cgroup": file("0::/system.slice/sluice-agent.service\n"),
			"sys/fs/cgroup/system.slice/sluice-agent.service/memory.max": file("1073741824\n"),
			"sys/fs/cgroup/system.slice/memory.max":                      file("805306368\n"),
		}, 768 << 20, true, ""},
		{"v2 limit on an ancestor only", fstest.MapFS{
			"proc/self/cgroup":                          file("0::/kubepods/pod1/c1\n"),
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": file("max\n"),
			"sys/fs/cgroup/kubepods/pod1/memory.max":    file("268435456\n"),
		}, 256 << 20, true, ""},
		{"v1 in a container without a namespace: the host's path, the mount's root", fstest.MapFS{
			"proc/self/cgroup":                           file("12:cpu,cpuacct:/kubepods/pod1/c1\n11:memory:/kubepods/pod1/c1\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("134217728\n"),
		}, 128 << 20, true, ""},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 0, false, ""},
		{"hybrid: unified without memory, memory on v1", fstest.MapFS{
			"proc/self/cgroup": file("0::/user.slice\n7:memory:/user.slice\n"),
			"sys/fs/cgroup/memory/user.slice/memory.limit_in_bytes": file("2147483648\n"),
		}, 2 << 30, true, ""},
		{"a file that is not a number", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		}, 0, false, `sys/fs/cgroup/memory.max holds "lots"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit, ok, err := Limit(tc.fs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Limit: %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || limit != tc.limit || ok != tc.ok {
				t.Fatalf("Limit = %d, %v, %v; want %d, %v", limit, ok, err, tc.limit, tc.ok)
			}
		})
	}
}

// TestSet: the runtime gets Fraction of the cgroup's limit, nothing when
// GOMEMLIMIT is set or no limit is found.
func TestSet(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	limited := fstest.MapFS{"proc/self/cgroup": file("0::/\n"), "sys/fs/cgroup/memory.max": file("1000000000\n")}
	noEnv := func(string) (string, bool) { return "", false }

	debug.SetMemoryLimit(math.MaxInt64)
	r, err := Set(limited, func(k string) (string, bool) { return "400MiB", k == "GOMEMLIMIT" })
	if err != nil || !r.FromEnv || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set: %+v, %v; the runtime's limit must stay", r, err)
	}
	r, err = Set(limited, noEnv)
	if err != nil || r.Cgroup != 1e9 || r.Set != 9e8 || debug.SetMemoryLimit(-1) != 9e8 {
		t.Fatalf("under a 1e9 limit: %+v, %v, runtime %d; want 9e8", r, err, debug.SetMemoryLimit(-1))
	}
	if !strings.Contains(r.String(), "GOMEMLIMIT 900000000 bytes: 90% of the cgroup's memory limit 1000000000") {
		t.Fatalf("says %q", r)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if r, err = Set(fstest.MapFS{}, noEnv); err != nil || r.Set != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("without a cgroup: %+v, %v", r, err)
	}
}
