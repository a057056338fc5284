package version

import (
	"runtime/debug"
	"testing"
)

func TestCommitOf(t *testing.T) {
	const rev = "5d9fccf788be206827da61f02f151337922c9f10"
	for _, tt := range []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"no vcs stamp", []debug.BuildSetting{{Key: "GOOS", Value: "linux"}}, ""},
		{"clean checkout", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, rev},
		{"changed checkout", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, rev + "-dirty"},
		{"modified without a revision", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := commitOf(tt.settings); got != tt.want {
				t.Errorf("commitOf = %q, want %q", got, tt.want)
			}
		})
	}
}
