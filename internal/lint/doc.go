// Package lint holds the project rules that staticcheck lacks, run by
// make check through the sluicelint command:
//
//   - every exported name has a doc comment (CheckDocs);
//   - no time.Sleep in a _test.go file outside the test kit (CountSleeps),
//     held to a baseline of today's offenders (Baseline) so that only new
//     sleeps fail while the old ones are replaced.
//
// It reads source with go/parser alone: no type information, no build.
package lint
