package integration

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestFileSourceToFileSinkRoundTrip moves a file through a topic into
// another file and checks the copy line for line, across a pause, a stop and
// a resume.
func TestFileSourceToFileSinkRoundTrip(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("lines")
	var want []string
	for i := 1; i <= 200; i++ {
		want = append(want, fmt.Sprintf("line %03d %s", i, strings.Repeat("x", i%17)))
	}
	writeLines(t, filepath.Join(c.WorkDir, "in.txt"), want[:100])

	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": "in.txt", "topic": topic,
	}})
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": "out.txt", "topics": topic,
	}})
	c.WaitState("src", "RUNNING", 1, "RUNNING")
	c.WaitState("sink", "RUNNING", 1, "RUNNING")
	waitFile(t, filepath.Join(c.WorkDir, "out.txt"), want[:100])

	c.Must(http.StatusAccepted, "PUT", "/connectors/src/pause", nil)
	c.WaitState("src", "PAUSED", 1, "PAUSED")
	appendLines(t, filepath.Join(c.WorkDir, "in.txt"), want[100:150])
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitFile(t, filepath.Join(c.WorkDir, "out.txt"), want[:150])

	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.WaitState("src", "STOPPED", 0, "")
	appendLines(t, filepath.Join(c.WorkDir, "in.txt"), want[150:])
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitFile(t, filepath.Join(c.WorkDir, "out.txt"), want)

	if got := len(c.ReadTopic(topic)); got != len(want) {
		t.Fatalf("topic holds %d records, want %d (no duplicates after pause, stop and resume)", got, len(want))
	}
}
