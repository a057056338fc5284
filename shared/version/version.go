// Package version holds the build's version and commit.
//
// The commit comes from the version control stamp Go writes into a binary
// built from a git checkout (runtime/debug.ReadBuildInfo's vcs.revision), so
// a plain `go build` carries it without -ldflags. `go run` stamps only with
// -buildvcs=true, which `make run` passes; Go cannot stamp a build in a
// linked git worktree (golang/go#58218). A release build may still set it
// with -ldflags "-X github.com/sluice-io/sluice/shared/version.Commit=<sha>".
package version

import "runtime/debug"

// Version is Sluice's release version.
var Version = "0.1.0"

// unknown is the commit of a build that carries none.
const unknown = "unknown"

// Commit is the source commit the binary was built from, with "-dirty" when
// the checkout had uncommitted changes, or "unknown".
var Commit = unknown

func init() {
	// -ldflags -X sets Commit before init runs: it wins over the stamp.
	if Commit != unknown {
		return
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if c := commitOf(info.Settings); c != "" {
			Commit = c
		}
	}
}

// commitOf reads the commit from a build's VCS settings, "" if it has none.
func commitOf(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		return rev + "-dirty"
	}
	return rev
}
