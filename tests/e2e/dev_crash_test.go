package e2e

import (
	"context"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDevCrashSinkResumesFromLastCommit kills `sluice dev --data-dir`
// with SIGKILL twice while records stream into a file sink, and checks
// after each restart that the sink resumed from its last commit: its
// output holds each record once, except the records after the last commit
// before a crash, which it may write again.
//
// The first crash also leaves the broker's groups log ending in part of an
// entry, as a SIGKILL that lands in the middle of a commit's write does
// (now and then, under load: Linux may stop such a write between two
// pages). Before the embedded broker recovered from that, every commit of
// the second run was lost at the second crash, and the sink went back to
// the commit before the first one.
func TestDevCrashSinkResumesFromLastCommit(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	listen := sluicetest.FreeAddr(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", dataDir, "--listen", listen,
		"--offset-flush-interval", "200ms", "--leader-lease", "2s", "--log-level", "info")
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: waitReady(t, dev, listen, 1)}
	topic := procs.UniquePrefix(t) + "-lines"
	c.CreateTopic(topic, 1)
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": topic}})

	var runs []sinkRun
	for run := 1; run <= 3; run++ {
		if run > 1 {
			dev.Start()
			c.Brokers = waitReady(t, dev, listen, run)
		}
		p := startNumberedProducer(t, c.Brokers, topic)
		commit := waitCommitted(t, c.Brokers, topic, p.first+100)
		if run == 3 {
			// Let the sink catch up with everything, then stop cleanly.
			p.stop()
			waitOutput(t, out, endOffset(t, c.Brokers, topic)-1)
			runs = append(runs, sinkRun{outputEnd: fileSize(t, out)})
			dev.Terminate(os.Interrupt, 30*time.Second)
			break
		}
		// Mid-stream: the sink has committed records of this run and
		// records are still being produced when the process is killed.
		dev.Kill()
		p.stop()
		runs = append(runs, sinkRun{outputEnd: fileSize(t, out), committed: commit})
		if run == 1 {
			tearGroupsLog(t, filepath.Join(dataDir, "kafka", "groups.log"))
		}
	}
	checkResumes(t, out, runs)
}

// sinkRun is what the test saw of one run of dev: the size of the sink's
// output file when it ended and a committed offset it saw before the kill.
type sinkRun struct {
	outputEnd int64
	committed int64
}

// recordRE matches one record the numbered producer wrote, as the file sink
// writes it. A line the kill cut short and the next run's first line may
// stand on one line: only whole numbers count.
var recordRE = regexp.MustCompile(`rec-(\d{9})`)

// checkResumes checks the sink's output run by run: within a run the
// records follow each other, and each run after a crash starts at or after
// the offset committed before the crash and no later than the record after
// the last one written.
func checkResumes(t *testing.T, path string, runs []sinkRun) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var start int64
	last := int64(-1)
	for i, r := range runs {
		nums := recordNumbers(t, data[start:r.outputEnd])
		if len(nums) == 0 {
			t.Fatalf("run %d: the sink wrote nothing", i+1)
		}
		for j := 1; j < len(nums); j++ {
			if nums[j] != nums[j-1]+1 {
				t.Fatalf("run %d: record %d follows record %d", i+1, nums[j], nums[j-1])
			}
		}
		if i == 0 && nums[0] != 0 {
			t.Fatalf("run 1: the sink started at record %d, want 0", nums[0])
		}
		if i > 0 {
			if prev := runs[i-1].committed; nums[0] < prev {
				t.Fatalf("run %d: the sink resumed at offset %d, but before the crash it had committed offset %d: "+
					"it wrote records %d to %d a second time", i+1, nums[0], prev, nums[0], last)
			}
			if nums[0] > last+1 {
				t.Fatalf("run %d: the sink resumed at offset %d, after the last record it wrote (%d): it skipped records", i+1, nums[0], last)
			}
			t.Logf("run %d resumed at offset %d: committed before the crash ≥ %d, written %d", i+1, nums[0], runs[i-1].committed, last+1)
		}
		last = nums[len(nums)-1]
		start = r.outputEnd
	}
}

func recordNumbers(t *testing.T, data []byte) []int64 {
	t.Helper()
	var nums []int64
	for _, m := range recordRE.FindAllSubmatch(data, -1) {
		n, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		nums = append(nums, n)
	}
	return nums
}

// numberedProducer writes records "rec-<offset>" to a one-partition topic,
// so a record's number is its offset, until stopped.
type numberedProducer struct {
	first  int64 // the number of its first record: the topic's end offset when it started
	client *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	next   int64
	once   sync.Once
}

// startNumberedProducer starts producing to topic on brokers, continuing
// the numbering at the topic's end (a killed broker may have kept records
// it never acknowledged).
func startNumberedProducer(t *testing.T, brokers, topic string) *numberedProducer {
	t.Helper()
	cl, err := kgo.NewClient(append(sluicetest.ClientOpts(brokers, "test-producer"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	first := endOffset(t, brokers, topic)
	ctx, cancel := context.WithCancel(context.Background())
	p := &numberedProducer{first: first, next: first, client: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var recs []*kgo.Record
			for i := range int64(10) {
				recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "rec-%09d", p.next+i)})
			}
			if cl.ProduceSync(ctx, recs...).FirstErr() != nil {
				return // stopped, or the broker was killed
			}
			p.next += int64(len(recs))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// stop stops producing and returns the number after the last record that
// was acknowledged.
func (p *numberedProducer) stop() int64 {
	p.once.Do(func() {
		p.cancel()
		// Closing fails the records in flight: an idempotent producer
		// otherwise waits for a killed broker to answer them.
		p.client.Close()
		<-p.done
	})
	return p.next
}

// waitCommitted waits until the sink's group has committed at least least
// on the topic's partition 0, and returns the committed offset.
func waitCommitted(t *testing.T, brokers, topic string, least int64) int64 {
	t.Helper()
	adm := newAdmin(t, brokers)
	var at int64 = -1
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.FetchOffsets(ctx, "connect-sink")
		if err == nil {
			if o, ok := resp.Lookup(topic, 0); ok && o.Err == nil {
				at = o.At
			}
		}
		return at >= least, fmt.Sprintf("group connect-sink committed %d on %s, want ≥ %d (err %v)", at, topic, least, err)
	})
	return at
}

// endOffset is the end offset of the topic's partition 0.
func endOffset(t *testing.T, brokers, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := newAdmin(t, brokers).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offset of %s: %v", topic, err)
	}
	o, _ := ends.Lookup(topic, 0)
	return o.Offset
}

// newAdmin is an admin client of brokers, closed at the test's end.
func newAdmin(t *testing.T, brokers string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(sluicetest.ClientOpts(brokers, "test-admin")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// waitOutput waits until the last record the sink wrote is the one
// numbered last.
func waitOutput(t *testing.T, path string, last int64) {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		data, _ := os.ReadFile(path)
		nums := recordNumbers(t, data)
		var seen int64 = -1
		if len(nums) > 0 {
			seen = nums[len(nums)-1]
		}
		return seen == last, fmt.Sprintf("the sink's last record is %d, want %d", seen, last)
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// tearGroupsLog appends the first bytes of the log's first entry to it: the
// part of an entry that a write cut short leaves at the end of the file.
func tearGroupsLog(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 16 {
		t.Fatalf("%s holds %d bytes: no entry to tear", path, len(data))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data[:16]); err != nil {
		t.Fatal(err)
	}
}
