package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/sluicetest/procs"
)

// proc is one child process (a sluice coordinator or agent, a NATS server,
// a Kafka Connect worker JVM): the test kit's Proc, run by the program's
// runner (tb), with its stdout and stderr in one log. The kernel kills the
// child if this program dies, and killAll kills whatever is left on any
// exit path. The methods here are the kit's, with errors for the kit's
// failures.
type proc struct{ *procs.Proc }

// startProc starts bin with args as the child called name (its log is
// name.stderr in a directory of its own under the run's temp dir).
func startProc(name, bin string, args ...string) (p *proc, err error) {
	return startProcEnv(name, bin, nil, args...)
}

// startProcEnv is startProc with extra environment variables (KEY=value).
func startProcEnv(name, bin string, env []string, args ...string) (p *proc, err error) {
	defer catch(&err)
	kp := procs.NewProcOf(tb, bin, name, args...)
	kp.Env = env
	kp.MergeOutput = true
	kp.Start()
	return &proc{kp}, nil
}

// restart starts the exited child again with the same arguments,
// appending to its log.
func (p *proc) restart() (err error) {
	defer catch(&err)
	p.Start()
	return nil
}

// kill sends SIGKILL and waits (at most 10s) until the child is gone; a
// child that exited meanwhile is gone too.
func (p *proc) kill() (err error) {
	defer func() {
		if err != nil && !p.Running() {
			err = nil
		}
	}()
	defer catch(&err)
	if p.Running() {
		p.Kill()
	}
	return nil
}

// signal sends sig to the child.
func (p *proc) signal(sig syscall.Signal) (err error) {
	defer catch(&err)
	p.Signal(sig)
	return nil
}

// stop sends SIGTERM, waits up to timeout, then SIGKILL; how the child
// exits is not checked.
func (p *proc) stop(timeout time.Duration) {
	if p.signal(syscall.SIGTERM) != nil {
		return
	}
	if _, ok := p.Wait(timeout); !ok {
		_ = p.kill()
	}
}

// rssMiB is the child's resident set size (VmRSS) in MiB.
func (p *proc) rssMiB() (float64, error) {
	return rssOf(p.Pid())
}

// rssOf reads VmRSS of pid from /proc.
func rssOf(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// treeRSSMiB is the resident set size of pid and of every process below it
// (an agent and the connector host JVM it started), in MiB, and of pid
// alone.
func treeRSSMiB(pid int) (tree, self float64, err error) {
	if self, err = rssOf(pid); err != nil {
		return 0, 0, err
	}
	tree = self
	for _, child := range descendants(pid) {
		// A child may exit between the scan and the read: it then holds
		// no memory.
		if v, err := rssOf(child); err == nil {
			tree += v
		}
	}
	return tree, self, nil
}

// descendants are the pids below pid, from the parent pids in /proc/*/stat.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses,
		// so the fields count from the last ')'.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// peakSampler calls sample every interval on a goroutine of its own and
// keeps the element-wise maximum of what it returns, until stop.
type peakSampler struct {
	once  sync.Once
	stopc chan struct{}
	done  chan struct{}
	peaks []float64
	n     int
	err   error
}

// samplePeaks starts a peakSampler.
func samplePeaks(interval time.Duration, sample func() ([]float64, error)) *peakSampler {
	s := &peakSampler{stopc: make(chan struct{}), done: make(chan struct{})}
	take := func() {
		v, err := sample()
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			return
		}
		if s.peaks == nil {
			s.peaks = make([]float64, len(v))
		}
		for i := range v {
			s.peaks[i] = max(s.peaks[i], v[i])
		}
		s.n++
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			take()
			select {
			case <-s.stopc:
				take()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peaks and the number of samples;
// a failed sample (a process gone) is an error. It may be called again.
func (s *peakSampler) stop() ([]float64, int, error) {
	s.once.Do(func() { close(s.stopc) })
	<-s.done
	return s.peaks, s.n, s.err
}
