package integration

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/tests/harness"
)

// TestCreateWithOffsetsKIPExample is KIP-995's example verbatim: a file
// source created at byte 30 sends exactly the lines after it.
func TestCreateWithOffsetsKIPExample(t *testing.T) {
	c := harness.Start(t, harness.Options{})
	topic := c.Name("test-topic")
	lines := []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "after-30-1", "after-30-2"}
	writeLines(t, filepath.Join(c.WorkDir, "test.txt"), lines)
	body := `{"name":"file-src-1","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"test.txt","topic":"` + topic + `","tasks.max":"1"},"initial_offsets":[{"partition":{"filename":"test.txt"},"offset":{"position":33}}]}`
	r := c.Must(http.StatusCreated, "POST", "/connectors", body)
	if !strings.Contains(string(r.Body), `"offsets_status":{"message":"The offsets for this connector have been altered successfully"}`) {
		t.Fatalf("body: %s", r.Body)
	}
	c.WaitState("file-src-1", "RUNNING", 1, "RUNNING")
	harness.Eventually(t, 20e9, func() (bool, string) {
		recs := c.ReadTopic(topic)
		return len(recs) == 2 && string(recs[0].Value) == "after-30-1" && string(recs[1].Value) == "after-30-2", string(c.Must(200, "GET", "/connectors/file-src-1/offsets", nil).Body)
	})
}
