package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Rule is one row of the spec's §0 as data: which scenario and step, and
// which status and message on each side, make that row.
type Rule struct {
	// Row names the §0 row, as reports print it.
	Row string `json:"row"`
	// Scenarios and Steps restrict the rule (empty: any).
	Scenarios []string `json:"scenarios,omitempty"`
	Steps     []string `json:"steps,omitempty"`
	Upstream  Side     `json:"upstream"`
	Sluice    Side     `json:"sluice"`
	// SameMessage requires both error messages to be equal (the row
	// changes only the status).
	SameMessage bool `json:"same_message,omitempty"`
	// Note says why the rule is written as it is, for readers of the data.
	Note string `json:"note,omitempty"`
}

// Side is what one system's answer must look like for a rule to apply.
type Side struct {
	// Status is the HTTP status (0: any).
	Status int `json:"status,omitempty"`
	// Message is a regular expression on the normalised error message
	// ("": any). Body is one on the normalised body text.
	Message string `json:"message,omitempty"`
	Body    string `json:"body,omitempty"`

	message, body *regexp.Regexp
}

// LoadRules reads the embedded §0 rules and compiles their patterns.
func LoadRules() ([]Rule, error) {
	data, err := testdata.ReadFile("testdata/deviations.json")
	if err != nil {
		return nil, err
	}
	var rules []Rule
	if err := json.Unmarshal(data, &rules); err != nil {
		return nil, fmt.Errorf("testdata/deviations.json: %w", err)
	}
	for i := range rules {
		for _, side := range []*Side{&rules[i].Upstream, &rules[i].Sluice} {
			if side.Message != "" {
				if side.message, err = regexp.Compile(side.Message); err != nil {
					return nil, fmt.Errorf("rule %q: %w", rules[i].Row, err)
				}
			}
			if side.Body != "" {
				if side.body, err = regexp.Compile(side.Body); err != nil {
					return nil, fmt.Errorf("rule %q: %w", rules[i].Row, err)
				}
			}
		}
	}
	return rules, nil
}

func (s Side) matches(n normalizer, rec Record) bool {
	if rec.Err != "" || (s.Status != 0 && rec.Status != s.Status) {
		return false
	}
	if s.message != nil && !s.message.MatchString(n.errorMessage(rec)) {
		return false
	}
	if s.body != nil && !s.body.MatchString(n.text(strings.TrimSpace(string(rec.Body)))) {
		return false
	}
	return true
}

// Verdict words.
const (
	Same      = "same"
	Deviation = "deviation"
	Mismatch  = "MISMATCH"
)

// Verdict is the comparison of one scenario's answers on both systems.
type Verdict struct {
	Scenario string
	Covers   string
	Word     string
	// Rows are the §0 rows the deviations fall under, in step order.
	Rows  []string
	Diffs []Diff
	// Steps is how many steps were compared.
	Steps int
}

// Diff is one compared step whose answers differ.
type Diff struct {
	Step     string
	Request  string // upstream's request, with placeholders
	Row      string // the §0 row, "" for a mismatch
	Upstream string // the answers in short form
	Sluice   string
}

// Compare compares one scenario's records, step by step.
func Compare(sc Scenario, rules []Rule, up, sl System, upRecs, slRecs []Record) Verdict {
	v := Verdict{Scenario: sc.Name, Covers: sc.Covers, Word: Same}
	un, sn := normalizer{sys: up}, normalizer{sys: sl}
	if len(upRecs) != len(slRecs) || len(upRecs) != len(sc.Steps) {
		v.Word = Mismatch
		v.Diffs = append(v.Diffs, Diff{Step: "-", Upstream: fmt.Sprintf("%d records", len(upRecs)), Sluice: fmt.Sprintf("%d records", len(slRecs))})
		return v
	}
	for i, st := range sc.Steps {
		if st.Compare == "none" {
			continue
		}
		v.Steps++
		un.mine, sn.mine = st.Mine, st.Mine
		a, b := upRecs[i], slRecs[i]
		if un.view(a) == sn.view(b) && !a.TimedOut && !b.TimedOut {
			continue
		}
		d := Diff{Step: st.ID, Request: un.text(a.Request), Upstream: un.summary(a), Sluice: sn.summary(b)}
		if !a.TimedOut && !b.TimedOut {
			for _, r := range rules {
				if (len(r.Scenarios) == 0 || slices.Contains(r.Scenarios, sc.Name)) &&
					(len(r.Steps) == 0 || slices.Contains(r.Steps, st.ID)) &&
					r.Upstream.matches(un, a) && r.Sluice.matches(sn, b) &&
					(!r.SameMessage || un.errorMessage(a) == sn.errorMessage(b)) {
					d.Row = r.Row
					break
				}
			}
		}
		if d.Row == "" {
			v.Word = Mismatch
		} else {
			if v.Word == Same {
				v.Word = Deviation
			}
			if !slices.Contains(v.Rows, d.Row) {
				v.Rows = append(v.Rows, d.Row)
			}
		}
		v.Diffs = append(v.Diffs, d)
	}
	return v
}

// Line is the verdict's one-line form: the word, the scenario, and the §0
// rows or the first mismatching step.
func (v Verdict) Line() string {
	s := fmt.Sprintf("%-9s %s", v.Word, v.Scenario)
	switch v.Word {
	case Deviation:
		s += "  [§0: " + strings.Join(v.Rows, "; ") + "]"
	case Mismatch:
		var steps []string
		for _, d := range v.Diffs {
			if d.Row == "" {
				steps = append(steps, d.Step)
			}
		}
		s += "  (steps: " + strings.Join(steps, ", ") + ")"
	}
	return s
}
