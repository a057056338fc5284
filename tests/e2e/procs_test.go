package e2e

import (
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"testing"
	"time"
)

// TestProcPauseResumeKillRestart checks the process helper itself on a
// `sluice dev` process: a paused process answers nothing, a resumed one
// answers again, a killed one is gone at once, and Restart brings it back
// with the same flags.
func TestProcPauseResumeKillRestart(t *testing.T) {
	t.Parallel()
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", t.TempDir(), "--listen", listen)
	waitReady(t, dev, listen, 1)
	url := "http://" + listen + "/health"
	client := &http.Client{Timeout: 300 * time.Millisecond}

	dev.Pause()
	if resp, err := client.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("a paused process answered GET /health: %d", resp.StatusCode)
	}
	dev.Resume()
	procs.WaitHealthy(t, "http://"+listen, 10*time.Second, dev)

	pid := dev.Pid()
	dev.Kill()
	if dev.Running() {
		t.Fatalf("pid %d still running after Kill", pid)
	}
	if code, _ := dev.Wait(0); code != -1 {
		t.Fatalf("exit code after SIGKILL: %d, want -1 (killed by a signal)", code)
	}
	dev.Restart()
	waitReady(t, dev, listen, 2)
	if dev.Pid() == pid || dev.Starts() != 2 {
		t.Fatalf("Restart: pid %d (was %d), %d starts", dev.Pid(), pid, dev.Starts())
	}
	procs.WaitHealthy(t, "http://"+listen, 10*time.Second, dev)
}
