package javaregex

import "testing"

func TestCompileMatchesWholeStrings(t *testing.T) {
	re, err := Compile("orders|pay.*")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"orders": true, "payments": true, "old-orders": false, "orders-2": false, "x-pay": false} {
		if re.MatchString(s) != want {
			t.Errorf("%q: %v, want %v", s, !want, want)
		}
	}
	if _, err := Compile("(?=x)"); err == nil {
		t.Error("a lookahead compiled")
	}
}
