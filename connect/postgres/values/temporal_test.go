package values

import (
	"testing"
	"time"
)

// TestDaysFromCivil checks the epoch-day arithmetic against Go's calendar
// (proleptic Gregorian, as java.time's) across five millennia either side.
func TestDaysFromCivil(t *testing.T) {
	for y := int64(-3000); y <= 5000; y += 7 {
		for _, md := range [][2]int64{{1, 1}, {2, 28}, {3, 1}, {12, 31}, {6, 15}} {
			want := time.Date(int(y), time.Month(md[0]), int(md[1]), 0, 0, 0, 0, time.UTC).Unix() / 86400
			if y < 1970 && time.Date(int(y), time.Month(md[0]), int(md[1]), 0, 0, 0, 0, time.UTC).Unix()%86400 != 0 {
				want--
			}
			if got := daysFromCivil(y, md[0], md[1]); got != want {
				t.Fatalf("%d-%02d-%02d: got %d, want %d", y, md[0], md[1], got, want)
			}
			if gy, gm, gd := civilFromDays(want); gy != y || gm != md[0] || gd != md[1] {
				t.Fatalf("civilFromDays(%d) = %d-%d-%d, want %d-%d-%d", want, gy, gm, gd, y, md[0], md[1])
			}
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want int32
	}{
		{"1970-01-01", 0},
		{"2024-02-29", 19782},
		{"0001-01-01", -719162},
		{"0001-12-31 BC", -719163}, // year 0
		{"0044-03-15 BC", int32(daysFromCivil(-43, 3, 15))},
		{"infinity", -2147472692},
		{"-infinity", -2147472691},
	}
	for _, tt := range tests {
		got, err := parseDate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDate(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "2024-2-29", "29.02.2024", "2024-13-01", "0000-01-01"} {
		if _, err := parseDate(bad); err == nil {
			t.Errorf("parseDate(%q) accepted", bad)
		}
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in     string
		micros int64
		iso    string
	}{
		{"00:00:00", 0, "P0Y0M0DT0H0M0S"},
		{"1 year 2 mons 3 days 04:05:06.789", 37091106789000, "P1Y2M3DT4H5M6.789S"},
		{"-1 years -2 mons -3 days -04:05:06.789", -37091106789000, "P-1Y-2M-3DT-4H-5M-6.789S"},
		{"-1 days", -86400000000, "P0Y0M-1DT0H0M0S"},
		{"178000000 years", 9223372036854775807, "P178000000Y0M0DT0H0M0S"},
		{"-178000000 years", -9223372036854775808, "P-178000000Y0M0DT0H0M0S"},
		{"00:00:00.000001", 1, "P0Y0M0DT0H0M0.000001S"},
		{"3 days -00:00:01.5", 259198500000, "P0Y0M3DT0H0M-1.5S"},
	}
	for _, tt := range tests {
		iv, err := parseInterval(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := iv.micros(); got != tt.micros {
			t.Errorf("%s micros: got %d, want %d", tt.in, got, tt.micros)
		}
		if got, err := iv.iso(); err != nil || got != tt.iso {
			t.Errorf("%s iso: got %s, %v; want %s", tt.in, got, err, tt.iso)
		}
	}
}
