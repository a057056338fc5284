package connectors

import "testing"

// TestSparkline draws the newest width samples, each as high as its share
// of the highest of them; all zero is flat.
func TestSparkline(t *testing.T) {
	for _, tt := range []struct {
		samples [][2]int64
		width   int
		want    string
	}{
		{[][2]int64{{1, 0}, {2, 7}, {3, 14}, {4, 3}}, 3, "▄█▂"},
		{[][2]int64{{1, 0}, {2, 0}}, 40, "▁▁"},
		{nil, 40, ""},
	} {
		if got := Sparkline(tt.samples, tt.width); got != tt.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", tt.samples, tt.width, got, tt.want)
		}
	}
}
