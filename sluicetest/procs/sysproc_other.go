//go:build !linux

package procs

import "syscall"

// sysProcAttr has nothing to add outside Linux (no parent-death signal).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// procState is unknown outside Linux.
func procState(int) string { return "" }
