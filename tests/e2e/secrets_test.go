package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDevConfigProvidersAndAllowedPaths runs `sluice dev` with
// --config-providers and --file-allowed-paths (issue 14 §4, §5) and checks
// them through the binary's flags: a file source of /etc/passwd is refused
// with the invalid-config 400, a file round trip inside the allowed
// directory works, and a secret a placeholder names reaches neither the
// config topic, GET …/tasks nor the process's log.
func TestDevConfigProvidersAndAllowedPaths(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(root, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "pw-" + procs.UniquePrefix(t)
	props := filepath.Join(files, "db.properties")
	if err := os.WriteFile(props, []byte("password="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := []string{"one", "two", "three"}
	if err := os.WriteFile(filepath.Join(files, "in.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", filepath.Join(root, "data"), "--listen", listen, "--log-level", "debug",
		"--config-providers", "file,env", "--file-allowed-paths", files, "--work-dir", files)
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: waitReady(t, dev, listen, 1)}
	topic := procs.UniquePrefix(t) + "-lines"

	r := c.Do(http.MethodPost, "/connectors", map[string]any{"name": "passwd", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": "/etc/passwd", "topic": topic}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "The path /etc/passwd is not under the allowed paths of any agent that can run this connector ("+files+")") {
		t.Fatalf("a file source of /etc/passwd: %s, want the invalid-config 400", r)
	}

	placeholder := "${file:" + props + ":password}"
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": "in.txt", "topic": topic, "source.password": placeholder}})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": "out.txt", "topics": topic}})
	c.WaitRunning("src", 1)
	c.WaitRunning("sink", 1)
	want := strings.Join(lines, "\n") + "\n"
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(filepath.Join(files, "out.txt"))
		return string(b) == want, fmt.Sprintf("out.txt holds %q", b)
	})

	tasks := c.Must(http.StatusOK, http.MethodGet, "/connectors/src/tasks", nil)
	if !strings.Contains(string(tasks.Body), `"source.password":"`+placeholder+`"`) || strings.Contains(string(tasks.Body), secret) {
		t.Errorf("GET tasks = %s, want the placeholder and no secret", tasks.Body)
	}
	for _, rec := range c.ReadTopic("sluice-configs") {
		if strings.Contains(string(rec.Value), secret) {
			t.Errorf("config record %s holds the secret: %s", rec.Key, rec.Value)
		}
	}
	if got := dev.LogLines(secret); len(got) > 0 {
		t.Errorf("the log holds the secret: %q", got)
	}
	if dev.CountLog("level=DEBUG") == 0 {
		t.Error("nothing was logged at debug level: the log check proves nothing")
	}
}
