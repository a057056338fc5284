// Package version holds the build's version and commit, set with -ldflags
// "-X github.com/sluice-io/sluice/shared/version.Commit=<sha>".
package version

// Version is Sluice's release version.
var Version = "0.1.0"

// Commit is the source commit the binary was built from.
var Commit = "unknown"
