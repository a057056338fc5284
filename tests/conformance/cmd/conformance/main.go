// Command conformance runs the REST scenario list against a Kafka Connect
// worker and a Sluice coordinator, prints one verdict line per scenario,
// writes the Markdown report, and exits 1 on any MISMATCH.
//
//	conformance -upstream http://127.0.0.1:18083 -sluice http://127.0.0.1:18084 \
//	    -kafka 127.0.0.1:9092 -out docs/conformance.md
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/tests/conformance"
)

func main() {
	upURL := flag.String("upstream", "http://127.0.0.1:18083", "Kafka Connect REST base URL (the reference)")
	slURL := flag.String("sluice", "http://127.0.0.1:18084", "Sluice REST base URL")
	brokers := flag.String("kafka", "127.0.0.1:9092", "Kafka bootstrap servers both systems use (topics are created there)")
	out := flag.String("out", "", "write the Markdown report here (e.g. docs/conformance.md)")
	dump := flag.String("records", "", "write every recorded answer as JSON here (for debugging)")
	only := flag.String("only", "", "run only scenarios whose name matches this regular expression")
	runID := flag.String("run-id", fmt.Sprintf("%x", time.Now().Unix()%0xfffff), "suffix that makes this run's names unique")
	flag.Parse()
	os.Exit(run(*upURL, *slURL, *brokers, *out, *dump, *only, *runID))
}

func run(upURL, slURL, brokers, out, dump, only, runID string) int {
	suite, err := conformance.LoadSuite()
	if err != nil {
		return fail(err)
	}
	rules, err := conformance.LoadRules()
	if err != nil {
		return fail(err)
	}
	var filter *regexp.Regexp
	if only != "" {
		if filter, err = regexp.Compile(only); err != nil {
			return fail(err)
		}
	}
	base, err := os.MkdirTemp("", "sluice-conformance-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(base)
	up := conformance.System{Label: "upstream", URL: strings.TrimRight(upURL, "/"),
		ConnPrefix: "up" + runID + "-", TopicPrefix: "conformance-" + runID + "-up-", Dir: filepath.Join(base, "upstream"), Brokers: brokers}
	sl := conformance.System{Label: "sluice", URL: strings.TrimRight(slURL, "/"),
		ConnPrefix: "sl" + runID + "-", TopicPrefix: "conformance-" + runID + "-sl-", Dir: filepath.Join(base, "sluice"), Brokers: brokers}
	for _, s := range []conformance.System{up, sl} {
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return fail(err)
		}
	}

	ctx := context.Background()
	adm, err := admin(brokers)
	if err != nil {
		return fail(err)
	}
	defer adm.Close()
	topics := map[string]int32{}
	for _, s := range []conformance.System{up, sl} {
		for _, t := range suite.Topics {
			topics[s.TopicPrefix+t.Name] = t.Partitions
		}
	}
	if err := createTopics(ctx, adm, topics); err != nil {
		return fail(err)
	}
	defer deleteTopics(adm, topics)

	rep := conformance.Report{Started: time.Now(), Upstream: root(up.URL), Sluice: root(sl.URL)}
	var all []map[string]any
	for _, sc := range suite.Scenarios {
		if filter != nil && !filter.MatchString(sc.Name) {
			continue
		}
		var upRecs, slRecs []conformance.Record
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); upRecs = up.RunScenario(ctx, sc) }()
		go func() { defer wg.Done(); slRecs = sl.RunScenario(ctx, sc) }()
		wg.Wait()
		v := conformance.Compare(sc, rules, up, sl, upRecs, slRecs)
		rep.Verdicts = append(rep.Verdicts, v)
		fmt.Println(v.Line())
		for _, d := range v.Diffs {
			if d.Row == "" {
				fmt.Printf("          step %s: %s\n            upstream: %s\n            sluice:   %s\n", d.Step, d.Request, d.Upstream, d.Sluice)
			}
		}
		all = append(all, map[string]any{"scenario": sc.Name, "upstream": records(upRecs), "sluice": records(slRecs)})
	}
	rep.Elapsed = time.Since(rep.Started)
	same, dev, mis := rep.Counts()
	fmt.Printf("conformance: %d scenarios in %s: %d same, %d deviation, %d MISMATCH\n",
		len(rep.Verdicts), rep.Elapsed.Round(time.Second), same, dev, mis)
	if out != "" {
		if err := os.WriteFile(out, []byte(rep.Markdown()), 0o644); err != nil {
			return fail(err)
		}
		fmt.Printf("conformance: wrote %s\n", out)
	}
	if dump != "" {
		data, _ := json.MarshalIndent(all, "", "  ")
		if err := os.WriteFile(dump, data, 0o644); err != nil {
			return fail(err)
		}
	}
	if mis > 0 {
		return 1
	}
	return 0
}

// records is the debugging form of a scenario's answers.
func records(recs []conformance.Record) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		out = append(out, map[string]any{"step": r.Step.ID, "request": r.Request, "status": r.Status,
			"body": string(r.Body), "location": r.Location, "polls": r.Polls, "timed_out": r.TimedOut, "error": r.Err})
	}
	return out
}

// root is a system's GET / answer (its version, commit and Kafka cluster
// id), as the report shows it: the JSON both systems answer. Both are up
// by then (run.sh waited for them): a few attempts are enough.
func root(base string) string {
	c, err := api.NewClient(api.Config{Address: base, UserAgent: "sluice-conformance", Retry: &api.RetryPolicy{MaxAttempts: 3}})
	if err != nil {
		return "error: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := c.Admin().ServerInfo(ctx)
	if err != nil {
		return "error: " + err.Error()
	}
	data, err := json.Marshal(info)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(data)
}

func admin(brokers string) (*kadm.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ClientID("sluice-conformance"))
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// createTopics creates the scenarios' topics (replication factor 1).
func createTopics(ctx context.Context, adm *kadm.Client, topics map[string]int32) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for name, parts := range topics {
		resp, err := adm.CreateTopic(ctx, parts, 1, nil, name)
		if err != nil {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
		if resp.Err != nil {
			return fmt.Errorf("create topic %s: %w", name, resp.Err)
		}
	}
	return nil
}

// deleteTopics removes the run's topics; failures are only reported.
func deleteTopics(adm *kadm.Client, topics map[string]int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var names []string
	for name := range topics {
		names = append(names, name)
	}
	if _, err := adm.DeleteTopics(ctx, names...); err != nil {
		fmt.Fprintf(os.Stderr, "conformance: delete topics: %v\n", err)
	}
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
	return 2
}
