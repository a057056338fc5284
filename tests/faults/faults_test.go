package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest/procs"
)

// modeEnv selects the suite: "short" or "full"; unset, it is skipped.
const modeEnv = "SLUICE_FAULTS"

func TestMain(m *testing.M) {
	os.Exit(mainRun(m))
}

func mainRun(m *testing.M) int {
	if os.Getenv(modeEnv) == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "sluice-faults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if _, err = procs.BuildBinary(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := BuildNATSServer(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// TestFaults runs the rows of the selected suite one after the other,
// each on a cluster of its own, and prints and writes the table.
func TestFaults(t *testing.T) {
	mode := os.Getenv(modeEnv)
	if mode == "" {
		t.Skipf("the fault suite runs with %s=short or %s=full (make faults-short, make faults)", modeEnv, modeEnv)
	}
	if mode != "short" && mode != "full" {
		t.Fatalf("%s=%q: want short or full", modeEnv, mode)
	}
	short := mode == "short"
	var pick *regexp.Regexp
	if expr := os.Getenv("SLUICE_FAULTS_ROWS"); expr != "" {
		pick = regexp.MustCompile(expr)
	}
	began, built := time.Now(), commit() // the commit the binary was built of
	var results []Result
	for _, row := range Rows() {
		if (short && !row.Short) || (pick != nil && !pick.MatchString(row.Name)) {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			res := Result{Fault: row.Name}
			defer func() {
				if t.Failed() && res.Err == "" {
					res.Err = "the row did not complete (see the test log)"
				}
				results = append(results, res)
				fmt.Printf("faults: %s\n", strings.TrimSpace(Text([]Result{res})))
			}()
			runRow(t, row, short, &res)
		})
	}
	table := Text(results)
	fmt.Printf("\nfault suite (%s), %s, %v:\n%s\n", mode, brokerKind(), time.Since(began).Round(time.Second), table)
	report := os.Getenv("SLUICE_FAULTS_REPORT")
	if report == "" {
		report = filepath.Join(os.TempDir(), "sluice-faults-"+mode+".md")
	}
	md := fmt.Sprintf("Fault suite (%s) of %s, %s, pinned leader keys: %v; run %s, %v.\n\n%s",
		mode, built, brokerKind(), procs.LeaderKeyFile != "", began.UTC().Format("2006-01-02 15:04 MST"),
		time.Since(began).Round(time.Second), Markdown(results))
	if err := os.WriteFile(report, []byte(md), 0o644); err != nil {
		t.Errorf("write %s: %v", report, err)
	} else {
		fmt.Printf("table written to %s\n", report)
	}
}

// brokerKind says which broker the rows ran on.
func brokerKind() string {
	if k := os.Getenv("SLUICE_TEST_KAFKA"); k != "" {
		return "Apache Kafka (" + k + "; the broker-kill rows on a broker of their own)"
	}
	return "the embedded broker (sluice dev kafka, with a data dir)"
}

// commit is the checkout's commit, or "an unknown commit".
func commit() string {
	out, err := exec.Command("git", "-C", repoRoot(), "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	return "commit " + strings.TrimSpace(string(out))
}
