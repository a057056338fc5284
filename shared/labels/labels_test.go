package labels

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	got, err := Parse(" zone=a , host=web-1")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"zone": "a", "host": "web-1"}) {
		t.Fatalf("got %v %v", got, err)
	}
	if got, err := Parse(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"zone", "=a", "a=1,a=2", "a=1,,b=2"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestMatches(t *testing.T) {
	agent := map[string]string{"zone": "a", "host": "h1"}
	if !Matches(nil, agent) || !Matches(map[string]string{"zone": "a"}, agent) {
		t.Fatal("want match")
	}
	if Matches(map[string]string{"zone": "b"}, agent) || Matches(map[string]string{"rack": "1"}, agent) {
		t.Fatal("want no match")
	}
}

func TestFormatRoundTrips(t *testing.T) {
	set := map[string]string{"zone": "a", "host": "web-1", "empty": ""}
	s := Format(set)
	if s != "empty=,host=web-1,zone=a" {
		t.Fatalf("Format = %q", s)
	}
	back, err := Parse(s)
	if err != nil || len(back) != 3 || back["host"] != "web-1" || back["empty"] != "" {
		t.Fatalf("Parse(Format) = %v, %v", back, err)
	}
}
