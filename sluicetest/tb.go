package sluicetest

// TB is what the kit's process code (Proc, NewProc, FreeAddr) needs of a
// test: testing.TB has it, and a program that is not a test (the benchmark
// runner) passes an adapter of its own. Fatal and Fatalf end the caller as
// a test's do, by not returning (a test's runtime.Goexit, an adapter's
// panic or exit).
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
	Cleanup(func())
	TempDir() string
}
